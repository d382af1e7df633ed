//! A commit's runs split into the parts that are analyzed apart: each configuration (series
//! key) is its own experiment, so its cells are decided together, its repeats are counted
//! among its own runs, and another configuration's upload changes nothing of its analysis.
//!
//! A run that holds results of several configurations joins them into one part (its stored
//! analysis covers all of them, so they are analyzed together). Runs with no result in any
//! series (nothing to analyze) form one part of their own, with no configuration.
//!
//! Why: issue 12's data set uploads every nightly commit as one run per configuration; when
//! the second configuration's run arrived, the whole commit (both configurations' 36 groups)
//! was analyzed again, though the first configuration's analysis could not change. And a
//! commit's repeats were counted over every run of the commit, so two configurations of one
//! repeat each read as "1 of 2 runs of the least measured cell".

use std::collections::BTreeSet;

/// One part of a commit: its configurations (series key JSON) and its runs, in the order the
/// runs were given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigPart<R> {
    /// The configurations (series key JSON) of the part's runs; empty for the part of runs
    /// without series.
    pub configs: BTreeSet<String>,
    /// The part's runs.
    pub runs: Vec<R>,
}

/// The parts of a commit whose runs are `runs` (each run with the configurations of its
/// results): two runs are in one part when they are joined by a chain of runs sharing a
/// configuration. Parts come in the order of their first run.
pub fn config_parts<R: Copy, S: AsRef<str>>(runs: &[(R, Vec<S>)]) -> Vec<ConfigPart<R>> {
    let mut parts: Vec<ConfigPart<R>> = Vec::new();
    for (run, configs) in runs {
        let configs: BTreeSet<String> = configs.iter().map(|c| c.as_ref().to_string()).collect();
        // Every part this run shares a configuration with (or, for a run without series, the
        // part without configurations) merges into the first of them.
        let joined: Vec<usize> = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                if configs.is_empty() {
                    p.configs.is_empty()
                } else {
                    !p.configs.is_disjoint(&configs)
                }
            })
            .map(|(i, _)| i)
            .collect();
        match joined.split_first() {
            None => parts.push(ConfigPart {
                configs,
                runs: vec![*run],
            }),
            Some((&first, rest)) => {
                // Removed from the back so the indices in `rest` stay valid.
                for &i in rest.iter().rev() {
                    let merged = parts.remove(i);
                    parts[first].configs.extend(merged.configs);
                    parts[first].runs.extend(merged.runs);
                }
                parts[first].configs.extend(configs);
                parts[first].runs.push(*run);
            }
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(configs: &[&str]) -> BTreeSet<String> {
        configs.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn each_configuration_is_a_part_with_its_own_runs() {
        let runs = [(1, vec!["fp16"]), (2, vec!["fp8"]), (3, vec!["fp16"])];
        assert_eq!(
            config_parts(&runs),
            vec![
                ConfigPart {
                    configs: set(&["fp16"]),
                    runs: vec![1, 3]
                },
                ConfigPart {
                    configs: set(&["fp8"]),
                    runs: vec![2]
                },
            ]
        );
    }

    #[test]
    fn a_run_of_two_configurations_joins_their_parts_and_runs_without_series_are_one_part() {
        let runs = [
            (1, vec!["a"]),
            (2, vec![]),
            (3, vec!["b"]),
            (4, vec!["c"]),
            (5, vec!["c", "a"]),
            (6, vec![]),
        ];
        assert_eq!(
            config_parts(&runs),
            vec![
                ConfigPart {
                    configs: set(&["a", "c"]),
                    runs: vec![1, 4, 5]
                },
                ConfigPart {
                    configs: set(&[]),
                    runs: vec![2, 6]
                },
                ConfigPart {
                    configs: set(&["b"]),
                    runs: vec![3]
                },
            ]
        );
    }
}
