//! The stats table's own tests: every number in order, the layout text.

use super::*;

#[test]
fn every_number_of_the_table_has_a_value_in_order() {
    let stats = Stats::default();
    let sources = Sources {
        stats: &stats,
        expired: 5,
        abandoned: 6,
        held_bodies: 7.0,
        body_timeouts: 8.0,
        top_refused: &[RefusedKey {
            key: None,
            refused: 3,
            overcount: 1,
        }],
        reserve: Reserve::NONE,
    };
    let paths: Vec<String> = layout_text().split(' ').map(str::to_string).collect();
    let values = values(&sources);
    // One value per path (the reserve's presence is its `reserve?`),
    // but for the list: its length and its one key's two.
    assert_eq!(values.len(), paths.len() - 1 + 1 + 2);
    let at = |path: &str| paths.iter().position(|p| p == path).unwrap_or(usize::MAX);
    assert_eq!(values.get(at("expired")), Some(&5.0));
    assert_eq!(values.get(at("bodyTimeouts")), Some(&8.0));
    assert_eq!(paths.last().map(String::as_str), Some("topRefusedKeys[]"));
    assert_eq!(
        values.get(at("topRefusedKeys[]")..),
        Some(&[1.0, 3.0, 1.0][..])
    );
    assert!(paths.contains(&"byCriticality.sheddable.queued".to_string()));
    // No reserve: its presence 0, every ceiling the whole limit.
    assert_eq!(values.get(at("reserve?")), Some(&0.0));
    assert_eq!(values.get(at("ceilings.sheddable")), Some(&0.0));
}

#[test]
fn the_reserve_in_force_and_the_ceilings_at_the_current_limit() {
    let mut stats = Stats::default();
    stats.limit = 3;
    let sources = Sources {
        stats: &stats,
        expired: 0,
        abandoned: 0,
        held_bodies: 0.0,
        body_timeouts: 0.0,
        top_refused: &[],
        reserve: Reserve::DEFAULT,
    };
    let text = layout_text();
    let paths: Vec<&str> = text.split(' ').collect();
    let values = values(&sources);
    let at = |path: &str| {
        let index = paths.iter().position(|p| *p == path).unwrap_or(usize::MAX);
        values.get(index).copied()
    };
    assert_eq!(at("reserve?"), Some(1.0));
    assert_eq!(at("reserve.critical"), Some(0.1));
    assert_eq!(at("reserve.default"), Some(0.2));
    // Limit 3 under the default reserve: 3 / 2 / 2.
    assert_eq!(at("ceilings.critical"), Some(3.0));
    assert_eq!(at("ceilings.default"), Some(2.0));
    assert_eq!(at("ceilings.sheddable"), Some(2.0));
}

#[test]
fn the_typescript_declarations_name_every_field_of_the_table() {
    let types = include_str!("typescript.rs");
    let declared = |interface: &str, field: &str| {
        let body = types
            .split(&format!("export interface {interface} {{"))
            .nth(1)
            .and_then(|rest| rest.split("\n}").next())
            .unwrap_or_default();
        body.contains(&format!("  {field}: "))
    };
    for entry in LAYOUT {
        let (name, fields) = match entry {
            Entry::Number(name, _) | Entry::RefusedKeys(name) | Entry::PerCriticality(name, _) => {
                (*name, &[][..])
            }
            Entry::ByCriticality(name, fields) => (*name, *fields),
            Entry::Nullable(name, _, fields) => {
                for (field, _) in *fields {
                    assert!(declared("ReserveStats", field), "ReserveStats.{field}");
                }
                (*name, &[][..])
            }
        };
        assert!(declared("LimiterStats", name), "LimiterStats.{name}");
        for (field, _) in fields {
            // A boolean's path ends in "!" (glue.js statsObject).
            let field = field.trim_end_matches('!');
            assert!(
                declared("CriticalityStats", field),
                "CriticalityStats.{field}"
            );
        }
    }
    for field in ["key", "refused", "overcount"] {
        assert!(declared("RefusedKey", field), "RefusedKey.{field}");
    }
}
