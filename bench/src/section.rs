//! A section of `compare`: the name `--only` selects it by, and the
//! function that runs its workload round by round and fills its rows of the
//! table, given how much to run and what every section shares.
//!
//! Each workload file keeps its own sections beside its workloads (a `rows`
//! module and its `SECTIONS`); [`crate::compare`] lists those lists in the
//! order `compare` runs them.

use crate::config::Config;
use crate::plain_rt::Env;
use crate::table::Table;
use crate::task_rt::TaskEnv;

/// One section: its name and what fills its rows.
#[derive(Debug, Clone, Copy)]
pub struct Section {
    /// What `--only` takes and `--help` lists.
    pub name: &'static str,
    /// Runs the section's workloads and adds their values to the table.
    pub run: fn(&Config, &Envs, &mut Table),
}

/// What the sections share: the plain-thread rows' runtime and wheel, and
/// the in-task rows' runtimes (1 and 2 workers) and wheels.
#[derive(Debug)]
pub struct Envs {
    pub plain: Env,
    pub task: TaskEnv,
}

impl Section {
    /// The section `name`, filled by `run`.
    pub const fn new(name: &'static str, run: fn(&Config, &Envs, &mut Table)) -> Section {
        Section { name, run }
    }
}

impl Default for Envs {
    fn default() -> Self {
        Envs::new()
    }
}

impl Envs {
    pub fn new() -> Envs {
        Envs {
            plain: Env::new(),
            task: TaskEnv::new(),
        }
    }
}
