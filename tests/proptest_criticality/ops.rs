//! The steps a run is made of, and the policies it runs under.

use super::model::Policy;
use edgeshed::admission::Criticality;
use proptest::prelude::*;
use proptest::sample::Index;

#[derive(Clone, Debug)]
pub enum Op {
    Arrive(Criticality, Option<u8>),
    Poll(Index),
    Release(Index),
    Abandon(Index),
    Advance(u64),
    SetLimit(usize),
    SetReserve(bool),
}

pub fn op_strategy() -> impl Strategy<Value = Op> {
    let rank = prop_oneof![
        Just(Criticality::Sheddable),
        Just(Criticality::Default),
        Just(Criticality::Critical)
    ];
    let key = prop_oneof![2 => Just(None), 3 => (0u8..3).prop_map(Some)];
    prop_oneof![
        6 => (rank, key).prop_map(|(rank, key)| Op::Arrive(rank, key)),
        5 => any::<Index>().prop_map(Op::Poll),
        4 => any::<Index>().prop_map(Op::Release),
        1 => any::<Index>().prop_map(Op::Abandon),
        2 => (0u64..12).prop_map(Op::Advance),
        1 => (0usize..=6).prop_map(Op::SetLimit),
        1 => any::<bool>().prop_map(Op::SetReserve),
    ]
}

pub fn policy_strategy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::Shed),
        Just(Policy::Wait),
        (0usize..4, 2u64..20, prop::option::of(1u64..20)).prop_map(
            |(max_queue, timeout, target)| {
                let codel_target = target.filter(|&t| max_queue > 0 && t < timeout);
                Policy::Queue {
                    max_queue,
                    timeout,
                    codel_target,
                }
            }
        ),
    ]
}
