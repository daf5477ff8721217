//! The steps of the fleet model (`fleet_model.rs`) and the strategy that
//! draws them.
#![allow(dead_code)]

use proptest::prelude::*;

/// What happens to a call a holder starts.
#[derive(Debug, Clone, Copy)]
pub enum Fate {
    /// The table gets it at once (and may hold it).
    Answer,
    /// The table applies it, the answer is lost (the holder times out).
    LoseAnswer,
    /// It never reaches the table.
    Drop,
    /// It arrives later (an `Arrive` step), at whatever table is there then.
    Delay,
}

/// What happens when a delayed call reaches the table.
#[derive(Debug, Clone, Copy)]
pub enum Outcome {
    /// The answer comes back at once.
    Answer,
    /// The answer is lost.
    Lost,
    /// The answer comes back later (a `Return` step).
    Late,
}

#[derive(Debug, Clone, Copy)]
pub enum Op {
    Poll {
        h: usize,
        queued: u32,
        fate: Fate,
    },
    Arrive {
        h: usize,
        outcome: Outcome,
    },
    Return {
        h: usize,
    },
    /// The holder times out the call the table holds for it.
    GiveUp {
        h: usize,
    },
    Admit {
        h: usize,
    },
    Finish {
        h: usize,
    },
    Advance {
        ms: u64,
    },
    Sweep,
    Restart,
    /// The isolate dies: it calls nothing and admits nothing any more; its
    /// calls in flight run on until they end (within `TIMEOUT`).
    Kill {
        h: usize,
    },
}

pub fn op(ttl: u64) -> impl Strategy<Value = Op> {
    let fate = prop_oneof![
        4 => Just(Fate::Answer),
        1 => Just(Fate::LoseAnswer),
        1 => Just(Fate::Drop),
        2 => Just(Fate::Delay),
    ];
    let outcome = prop_oneof![
        2 => Just(Outcome::Answer),
        1 => Just(Outcome::Lost),
        2 => Just(Outcome::Late),
    ];
    prop_oneof![
        6 => (0..3usize, 0..10u32, fate).prop_map(|(h, queued, fate)| Op::Poll { h, queued, fate }),
        2 => (0..3usize, outcome).prop_map(|(h, outcome)| Op::Arrive { h, outcome }),
        1 => (0..3usize).prop_map(|h| Op::Return { h }),
        1 => (0..3usize).prop_map(|h| Op::GiveUp { h }),
        5 => (0..3usize).prop_map(|h| Op::Admit { h }),
        3 => (0..3usize).prop_map(|h| Op::Finish { h }),
        4 => (0..=ttl * 6 / 5).prop_map(|ms| Op::Advance { ms }),
        1 => Just(Op::Sweep),
        1 => Just(Op::Restart),
        1 => (0..3usize).prop_map(|h| Op::Kill { h }),
    ]
}
