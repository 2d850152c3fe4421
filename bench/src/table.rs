//! The table `compare` prints, and how rounds alternate implementations.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::{median, Imp};

/// The unit of the per-operation rows.
pub const NS: &str = "ns/op";

pub struct Row {
    name: String,
    unit: &'static str,
    values: HashMap<Imp, Vec<f64>>,
}

#[derive(Default)]
pub struct Table {
    rows: Vec<Row>,
}

impl Table {
    fn row(&mut self, name: &str, unit: &'static str) -> &mut Row {
        let i = match self.rows.iter().position(|r| r.name == name) {
            Some(i) => i,
            None => {
                self.rows.push(Row {
                    name: name.to_string(),
                    unit,
                    values: HashMap::new(),
                });
                self.rows.len() - 1
            }
        };
        &mut self.rows[i]
    }

    /// Puts row `name` here in the table, before rows added later, even if
    /// its values come later.
    pub fn reserve(&mut self, name: &str, unit: &'static str) {
        self.row(name, unit);
    }

    pub fn add(&mut self, name: &str, unit: &'static str, imp: Imp, v: f64) {
        self.row(name, unit).values.entry(imp).or_default().push(v);
    }

    /// The median of `imp`'s values in row `name`.
    pub fn median(&self, name: &str, imp: Imp) -> Option<f64> {
        let row = self.rows.iter().find(|r| r.name == name)?;
        let mut v = row.values.get(&imp)?.clone();
        Some(median(&mut v))
    }

    pub fn print(&self) {
        // Only the implementations that have a value somewhere.
        let imps: Vec<Imp> = Imp::ALL
            .iter()
            .copied()
            .filter(|i| self.rows.iter().any(|r| r.values.contains_key(i)))
            .collect();
        print!("| workload | unit |");
        for imp in &imps {
            print!(" {} |", imp.name());
        }
        println!();
        println!("|---|---|{}", "---|".repeat(imps.len()));
        for row in &self.rows {
            let mut medians = HashMap::new();
            for (imp, v) in &row.values {
                medians.insert(*imp, median(&mut v.clone()));
            }
            print!("| {} | {} |", row.name, row.unit);
            for imp in &imps {
                let Some(v) = row.values.get(imp) else {
                    print!(" – |");
                    continue;
                };
                let med = medians[imp];
                let min = v.iter().copied().fold(f64::INFINITY, f64::min);
                print!(" {} ({})", fmt(med), fmt(min));
                let base = ratio_base(*imp, &medians);
                if let Some(b) = base.and_then(|b| medians.get(&b)) {
                    if *b > 0.0 && med >= 0.0 {
                        print!(" ×{:.2}", med / b);
                    }
                }
                print!(" |");
            }
            println!();
        }
    }
}

/// What `imp`'s ratio compares it with: tokio-util's `DelayQueue` with
/// hashwheel's where the row has it, every other peer with hashwheel's
/// futures (or its `DelayQueue` on the queue-only rows). The no-timer
/// baseline has no ratio.
fn ratio_base(imp: Imp, medians: &HashMap<Imp, f64>) -> Option<Imp> {
    let has = |i| medians.contains_key(&i);
    match imp {
        Imp::Hashwheel | Imp::HashwheelQueue | Imp::NoTimer | Imp::Floor => None,
        Imp::TokioUtil if has(Imp::HashwheelQueue) => Some(Imp::HashwheelQueue),
        _ if has(Imp::Hashwheel) => Some(Imp::Hashwheel),
        _ => Some(Imp::HashwheelQueue),
    }
}

pub fn fmt(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Implementations that `--imps` leaves out (for profiling one of them).
pub static SKIP: OnceLock<Vec<Imp>> = OnceLock::new();

/// Runs `f` for every implementation in `imps` (less those `--imps` leaves
/// out), `n` times, each round starting with the next implementation.
pub fn rounds(n: usize, imps: &[Imp], mut f: impl FnMut(Imp)) {
    let skip = SKIP.get().map_or(&[][..], |s| s.as_slice());
    let imps: Vec<Imp> = imps.iter().copied().filter(|i| !skip.contains(i)).collect();
    for r in 0..n {
        for k in 0..imps.len() {
            f(imps[(k + r) % imps.len()]);
        }
    }
}

/// `n` as `10k`, `4M`.
pub fn count(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}
