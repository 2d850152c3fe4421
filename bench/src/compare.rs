//! What `compare` runs: every workload file's sections, in the order it
//! runs them, and how `--only` picks some of them by name.
//!
//! The in-task sections come first, then the server, `hashwheel::io` and
//! the plain-thread ones; the sections on tokio's paused clock come last
//! (see [`plain_thread::rows::SECTIONS`]).

use crate::section::Section;
use crate::{in_task, io, plain_thread, server};

/// Each workload file's sections, in the order `compare` runs them.
pub const SECTIONS: [&[Section]; 4] = [
    in_task::rows::SECTIONS,
    server::rows::SECTIONS,
    io::rows::SECTIONS,
    plain_thread::rows::SECTIONS,
];

/// Every section, in the order `compare` runs them.
pub fn sections() -> impl Iterator<Item = &'static Section> {
    SECTIONS.iter().flat_map(|s| s.iter())
}

/// The section names, in order, as `--help` lists them.
pub fn names() -> String {
    let names: Vec<&str> = sections().map(|s| s.name).collect();
    names.join(", ")
}

/// The sections `--only` names, in the order `compare` runs them (every
/// section without `--only`); an error that names the unknown one and lists
/// them all.
pub fn select(only: Option<&[String]>) -> Result<Vec<&'static Section>, String> {
    let Some(only) = only else {
        return Ok(sections().collect());
    };
    if let Some(x) = only.iter().find(|x| !sections().any(|s| s.name == *x)) {
        return Err(format!(
            "--only {x}: no such section; sections: {}",
            names()
        ));
    }
    Ok(sections()
        .filter(|s| only.iter().any(|x| x == s.name))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `compare` makes of `--only VALUE`: the value split at commas.
    fn only(value: &str) -> Vec<String> {
        value.split(',').map(String::from).collect()
    }

    #[test]
    fn no_two_sections_share_a_name() {
        let all: Vec<&str> = sections().map(|s| s.name).collect();
        for (i, name) in all.iter().enumerate() {
            assert!(
                !all[i + 1..].contains(name),
                "two sections are called {name}"
            );
        }
    }

    #[test]
    fn every_name_help_lists_selects_its_section_alone() {
        let help = names();
        let listed: Vec<&str> = help.split(", ").collect();
        assert_eq!(listed.len(), sections().count());
        for name in listed {
            let picked = select(Some(&only(name))).expect("a listed name is a section");
            let picked: Vec<&str> = picked.iter().map(|s| s.name).collect();
            assert_eq!(picked, [name], "--only {name}");
        }
    }

    #[test]
    fn only_keeps_the_run_order_and_rejects_an_unknown_name() {
        let all: Vec<&str> = sections().map(|s| s.name).collect();
        let reversed: Vec<&str> = all.iter().rev().copied().collect();
        let picked = select(Some(&only(&reversed.join(",")))).expect("every section");
        let picked: Vec<&str> = picked.iter().map(|s| s.name).collect();
        assert_eq!(picked, all);
        let everything = select(None).expect("every section");
        assert_eq!(everything.len(), all.len());
        let err = select(Some(&only("task_register,nonesuch"))).unwrap_err();
        assert!(err.contains("--only nonesuch: no such section"), "{err}");
    }
}
