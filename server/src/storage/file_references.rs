//! The per-request numbers an uploaded file shares with its results' stored samples, so that
//! the file's `BTJ2` form ([`super::file_codec`]) keeps each of them once.
//!
//! A `vllm bench serve --save-detailed` file holds every request's TTFT, chunk gaps and
//! latency in seconds; the adapter reads the same numbers into the result's samples in ms
//! (`result_samples`). Stored twice they were 620 of the 847 bytes per stored value of issue
//! 12's data set (BENCHMARKS.md "Session 40"). Here the file's numbers are matched against
//! its results' samples, converted back to seconds the way the stored samples are (`ms /
//! 1000`), and every number that matches is written as a position in that sequence instead
//! of as a double. Matching is by exact bits, so the file reads back exactly whatever the
//! match found; a number that matches nothing stays a literal.
//!
//! The sequence (*references*): the samples of the file's results in result order (the
//! results whose `source.file` is the file), each as TTFT, E2E latency, TPOT (one per
//! request; a request without the value holds NaN, which no taken-out number equals, so the
//! positions stay aligned with the file's arrays) and then every chunk gap, each `ms / 1000`.
//!
//! The *ops*, LEB128 varints: per run of numbers, the count of literals, the count of numbers
//! copied from the references, and where the copy starts relative to where the one before
//! ended plus the literals between (zigzag): in a file whose arrays are the samples' columns
//! in order that is nearly always 0, so a column is a handful of bytes however long.

use benchtrail_core::samples::RequestSamples;
use rustc_hash::FxHashMap;

/// The numbers a file may refer to (module docs), with where each column and each request's
/// chunk gaps start, which is where a run of matches can begin.
#[derive(Debug, Default)]
pub struct References {
    values: Vec<f64>,
    /// The first reference position of each value found at a column's or a request's start,
    /// by its bits.
    starts: FxHashMap<u64, u32>,
}

impl References {
    /// The references of a file whose results' samples are `samples`, in result order.
    pub fn of_samples<'a>(samples: impl IntoIterator<Item = &'a RequestSamples>) -> References {
        let mut values = Vec::new();
        let mut starts = Vec::new();
        for s in samples {
            for column in [&s.ttft_ms, &s.e2el_ms, &s.tpot_ms].into_iter().flatten() {
                starts.push(values.len());
                values.extend(column.iter().map(|v| v.map_or(f64::NAN, |ms| ms / 1000.0)));
            }
            for gaps in s.itl_ms.iter().flatten() {
                starts.push(values.len());
                values.extend(gaps.iter().map(|ms| ms / 1000.0));
            }
        }
        let mut by_bits = FxHashMap::default();
        for at in starts {
            if let Some(v) = values.get(at) {
                by_bits.entry(v.to_bits()).or_insert(at as u32);
            }
        }
        References {
            values,
            starts: by_bits,
        }
    }

    /// How many numbers the references hold.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there is nothing to refer to.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `numbers` as ops (module docs) and the literals they leave, in order.
    pub fn split(&self, numbers: &[f64]) -> (Vec<u8>, Vec<f64>) {
        let refs = &self.values;
        let same = |at: usize, v: f64| refs.get(at).is_some_and(|r| r.to_bits() == v.to_bits());
        let mut ops = Vec::new();
        let mut literals = Vec::new();
        // Where the next number is expected in the references: after the last copy, one
        // further for every literal since (a number the tool wrote otherwise than the adapter
        // read it stands in its place).
        let mut expect = 0usize;
        let mut run_literals = 0u64;
        let mut i = 0;
        while i < numbers.len() {
            let v = numbers[i];
            let start = if same(expect, v) {
                Some(expect)
            } else {
                self.starts.get(&v.to_bits()).map(|&at| at as usize)
            };
            let Some(start) = start else {
                literals.push(v);
                run_literals += 1;
                expect += 1;
                i += 1;
                continue;
            };
            let mut len = 1;
            while i + len < numbers.len() && same(start + len, numbers[i + len]) {
                len += 1;
            }
            write_varint(&mut ops, run_literals);
            write_varint(&mut ops, len as u64);
            write_varint(&mut ops, zigzag(start as i64 - expect as i64));
            run_literals = 0;
            expect = start + len;
            i += len;
        }
        if run_literals > 0 {
            write_varint(&mut ops, run_literals);
            write_varint(&mut ops, 0);
            write_varint(&mut ops, 0);
        }
        (ops, literals)
    }

    /// The `count` numbers that [`References::split`] made `ops` and `literals` of.
    ///
    /// # Errors
    /// A description of what does not fit: ops cut short or pointing outside the
    /// references, literals too few or too many, a count other than `count`.
    pub fn join(&self, ops: &[u8], literals: &[f64], count: usize) -> Result<Vec<f64>, String> {
        let mut out = Vec::with_capacity(count);
        let mut literals = literals.iter();
        let mut at = 0;
        let mut expect = 0usize;
        while at < ops.len() {
            let run_literals = read_varint(ops, &mut at)?;
            let len = read_varint(ops, &mut at)?;
            let delta = unzigzag(read_varint(ops, &mut at)?);
            for _ in 0..run_literals {
                out.push(
                    *literals
                        .next()
                        .ok_or("BTJ2: fewer literals than the ops use")?,
                );
            }
            expect = expect
                .checked_add(run_literals as usize)
                .ok_or("BTJ2: ops overflow")?;
            if len == 0 {
                continue;
            }
            let start = (expect as i64)
                .checked_add(delta)
                .and_then(|s| usize::try_from(s).ok())
                .ok_or("BTJ2: a copy before the references' start")?;
            let end = start
                .checked_add(len as usize)
                .filter(|&e| e <= self.values.len())
                .ok_or("BTJ2: a copy past the references' end")?;
            out.extend_from_slice(&self.values[start..end]);
            expect = end;
            if out.len() > count {
                return Err(format!("BTJ2: ops give more than {count} numbers"));
            }
        }
        if literals.next().is_some() {
            return Err("BTJ2: literals left over".into());
        }
        if out.len() != count {
            return Err(format!("BTJ2: ops give {} numbers, not {count}", out.len()));
        }
        Ok(out)
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at).ok_or("BTJ2: ops cut short")?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err("BTJ2: a varint longer than 64 bits".into())
}

/// Samples as an adapter reads them from a file holding `ttft_s` and, per request, the chunk
/// gaps `gaps_s`, both in seconds (the adapters' `× 1000` to ms): what the tests of this module
/// and of [`super::file_codec`] refer files to.
#[cfg(test)]
pub(super) fn samples_in_seconds(ttft_s: &[f64], gaps_s: &[impl AsRef<[f64]>]) -> RequestSamples {
    RequestSamples {
        success: vec![true; ttft_s.len()],
        ttft_ms: Some(ttft_s.iter().map(|s| Some(s * 1000.0)).collect()),
        itl_ms: Some(
            gaps_s
                .iter()
                .map(|g| g.as_ref().iter().map(|s| s * 1000.0).collect())
                .collect(),
        ),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn references(ttft_s: &[f64], gaps_s: &[&[f64]]) -> References {
        References::of_samples([&samples_in_seconds(ttft_s, gaps_s)])
    }

    #[test]
    fn columns_in_order_cost_a_few_bytes_and_the_rest_stays_literal() {
        let refs = references(&[0.25, 0.5, 0.75], &[&[0.125, 0.0625], &[0.03125]]);
        assert_eq!(refs.len(), 6);
        // The file: its TTFTs, a number of no sample, its gaps with one written otherwise.
        let numbers = [0.25, 0.5, 0.75, 9.5, 0.125, 0.0626, 0.03125];
        let (ops, literals) = refs.split(&numbers);
        assert_eq!(literals, [9.5, 0.0626]);
        // 3 copied from 0; 1 literal, then 1 copied from 3, one before the place expected
        // after a literal (zigzag 1 is -1); 1 literal standing for reference 4, 1 copied
        // from 5, where expected.
        assert_eq!(ops, [0, 3, 0, 1, 1, 1, 1, 1, 0]);
        assert_eq!(refs.join(&ops, &literals, numbers.len()).unwrap(), numbers);
    }

    #[test]
    fn ops_that_do_not_fit_are_errors() {
        let refs = references(&[0.25, 0.5], &[]);
        let numbers = [0.25, 0.5, 7.0];
        let (ops, literals) = refs.split(&numbers);
        assert_eq!(refs.join(&ops, &literals, 3).unwrap(), numbers);
        assert!(refs.join(&ops, &literals, 4).is_err());
        assert!(refs.join(&ops, &[], 3).is_err());
        assert!(refs.join(&ops, &[7.0, 8.0], 3).is_err());
        assert!(refs.join(&ops[..ops.len() - 1], &literals, 3).is_err());
        // A copy past the end, before the start, an endless varint.
        assert!(refs.join(&[0, 3, 0], &[], 3).is_err());
        assert!(refs.join(&[0, 1, 1], &[], 1).is_err());
        assert!(refs.join(&[0xff; 11], &[], 1).is_err());
        assert!(References::default().join(&ops, &literals, 3).is_err());
    }
}
