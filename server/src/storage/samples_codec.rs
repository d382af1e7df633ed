//! The stored encoding of per-request samples (`result_samples.data` and `itl_data`): version 3
//! is written, versions 2 and 1 are still read.
//!
//! It lives in storage, not in core: it is a storage detail that nothing else reads, and
//! flate2 is a server dependency already.
//!
//! **Version 2** (`bts2-gzip`, since session 34, migration 0021) stores two blobs, each one
//! gzip member, little-endian throughout:
//! - `result_samples.data`: magic `BTS2`, then gzip of the request count `u32`, a
//!   column-flags byte, the success bitmap, per present latency column a presence bitmap
//!   (requests with a value), the token columns (presence bitmap, then `u64` values), the
//!   duration as `f64`, then TTFT, E2E latency and TPOT (`f64`, column after column)
//!   **byte-plane-shuffled** (all first bytes, then all second bytes, ...), which groups the
//!   similar sign/exponent bytes of nearby latencies so that deflate finds runs in them;
//! - `result_samples.itl_data`, when the flags say ITL: gzip of one `u32` gap count per
//!   request, then every gap (`f64`), byte-plane-shuffled the same way.
//!
//! Apart because the chunk gaps are nearly all of the floats (127 per request of 128 output
//! tokens, against 3 latencies) and most readers want none of them: the compare page, the
//! validation report, the capacity analysis and the SLO recomputation read TTFT, TPOT and E2E
//! latency only ([`SampleColumns::WithoutItl`]); reading, copying and inflating the gaps too
//! was most of their decoding.
//!
//! **Version 3** (`bts3-gzip`, since session 40; written now) is version 2 with the tool's
//! seconds kept: the magic is `BTS3`, the column-flags byte is followed by a *seconds* byte
//! (the TTFT, E2E latency and TPOT bits of the flags) naming the latency columns stored in
//! seconds, and `itl_data` starts with one byte, 1 when the gaps are stored in seconds, else 0.
//! A column is stored in seconds when every value `ms` of it is exactly `(ms / 1000) × 1000`
//! in doubles, and read back as that product; otherwise in milliseconds as before. Why: the
//! tools write seconds read off `time.perf_counter()`, differences of a clock that has run for
//! days, whose low mantissa bits are zeros; the adapters' `× 1000` fills those bits, so the
//! milliseconds compress like noise and the seconds do not. On the real mock-server file of
//! `examples/history` (c4, 60 requests, 7,620 gaps) the stored bytes fall from 41,977 to
//! 35,035, 17 % (`a_tools_latencies_are_stored_in_its_seconds`).
//!
//! **Version 1** (`bts1-gzip`, rows written before session 34): one gzip member holding magic
//! `BTS1`, the same structure with the ITL gap counts after the presence bitmaps, and every
//! float (latencies, then gaps) shuffled together, all in `data` (`itl_data` NULL). It is told
//! apart by the gzip magic number (`1F 8B`, RFC 1952) where version 2 starts with `BTS2`.
//!
//! Values round-trip bit-exactly (`f64::to_le_bytes`/`from_le_bytes`; tested below).
//!
//! Why this encoding, measured on `examples/history` (vLLM `--save-detailed`; version 1,
//! version 2 is within 1 % of it: `cargo test -p benchtrail-server --lib samples_codec --
//! --nocapture` prints both):
//!
//! | encoding                                                       | 60 requests, 7,620 ITL gaps | 20 requests, 2,540 gaps |
//! |----------------------------------------------------------------|---------:|---------:|
//! | one row per request (8 columns × 8 B, ITL as raw f64; no row overhead) | 64,800 B | 21,600 B |
//! | same + Postgres tuple headers (28 B per row)                     | 66,480 B | 22,160 B |
//! | `RequestSamples` as JSON, gzip                                   | 60,526 B | 20,111 B |
//! | this layout, floats not shuffled, gzip                           | 48,206 B | 16,174 B |
//! | **this layout, byte-plane-shuffled floats, gzip**                | **42,261 B** | **14,349 B** |
//!
//! i.e. 35 % below one row per request and 30 % below gzip'd JSON. Latencies are measured to
//! ~1 µs but written as full doubles, so their low mantissa bytes are noise that no lossless
//! coder shrinks much; the shuffle wins 12 % over plain gzip for nothing.

use benchtrail_core::samples::RequestSamples;
use flate2::{read::GzDecoder, write::GzEncoder, Compression};
use std::io::{Read, Write};

/// The `result_samples.encoding` value of what [`encode`] writes.
pub const ENCODING: &str = "bts3-gzip";

const MAGIC_V1: &[u8; 4] = b"BTS1";
const MAGIC_V2: &[u8; 4] = b"BTS2";
const MAGIC_V3: &[u8; 4] = b"BTS3";

const TTFT: u8 = 1;
const E2EL: u8 = 2;
const TPOT: u8 = 4;
const ITL: u8 = 8;
const INPUT: u8 = 16;
const OUTPUT: u8 = 32;
const DURATION: u8 = 64;

/// Which columns a reader wants decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleColumns {
    /// Every stored column.
    All,
    /// Every column but the chunk gaps: `itl_ms` is `None` in what [`decode`] returns, and a
    /// version 2 row's `itl_data` is neither read from the database nor inflated.
    WithoutItl,
}

/// Samples encoded as version 2 (module docs): what `result_samples.data` and `itl_data` hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedSamples {
    /// `BTS2` and the gzip'd structure and latencies.
    pub data: Vec<u8>,
    /// The gzip'd chunk gaps; `None` when the samples have no ITL column.
    pub itl: Option<Vec<u8>>,
}

/// Encodes samples as version 3 (module docs).
pub fn encode(s: &RequestSamples) -> EncodedSamples {
    let mut head = (s.len() as u32).to_le_bytes().to_vec();
    head.push(flags(s));
    let seconds_at = head.len();
    head.push(0);
    structure(s, &mut head);
    let mut latencies: Vec<f64> = Vec::new();
    for (col, bit) in [(&s.ttft_ms, TTFT), (&s.e2el_ms, E2EL), (&s.tpot_ms, TPOT)] {
        if let Some(col) = col {
            let values: Vec<f64> = col.iter().flatten().copied().collect();
            if let Some(in_seconds) = as_seconds(&values) {
                head[seconds_at] |= bit;
                latencies.extend(in_seconds);
            } else {
                latencies.extend(values);
            }
        }
    }
    let mut data = MAGIC_V3.to_vec();
    data.extend(gzip(&head, &latencies, true));
    let itl = s.itl_ms.as_ref().map(|itl| {
        let gaps: Vec<f64> = itl.iter().flatten().copied().collect();
        let (in_seconds, gaps) = match as_seconds(&gaps) {
            Some(seconds) => (1, seconds),
            None => (0, gaps),
        };
        // The gaps' own seconds flag leads the blob: only readers of the gaps read it.
        let mut head = vec![in_seconds];
        head.extend(itl.iter().flat_map(|g| (g.len() as u32).to_le_bytes()));
        gzip(&head, &gaps, true)
    });
    EncodedSamples { data, itl }
}

/// `values` (ms) in seconds when every one of them reads back exactly as `seconds × 1000.0`
/// (what the adapters computed from the tool's seconds, so usually the tool's own doubles
/// again, with their zero low bits: module docs); `None` when one does not.
fn as_seconds(values: &[f64]) -> Option<Vec<f64>> {
    values
        .iter()
        .map(|&ms| {
            let s = ms / 1000.0;
            (s * 1000.0).to_bits().eq(&ms.to_bits()).then_some(s)
        })
        .collect()
}

/// Multiplies back what [`as_seconds`] divided.
fn to_ms(values: &mut [f64]) {
    for v in values {
        *v *= 1000.0;
    }
}

/// The column-flags byte of `s`.
fn flags(s: &RequestSamples) -> u8 {
    [
        (s.ttft_ms.is_some(), TTFT),
        (s.e2el_ms.is_some(), E2EL),
        (s.tpot_ms.is_some(), TPOT),
        (s.itl_ms.is_some(), ITL),
        (s.input_tokens.is_some(), INPUT),
        (s.output_tokens.is_some(), OUTPUT),
        (s.duration_s.is_some(), DURATION),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .fold(0u8, |acc, (_, bit)| acc | bit)
}

/// Part A's structure after the flags: success bitmap, the latency columns' presence
/// bitmaps, the token columns, the duration.
fn structure(s: &RequestSamples, head: &mut Vec<u8>) {
    head.extend(bitmap(s.success.iter().copied()));
    for col in [&s.ttft_ms, &s.e2el_ms, &s.tpot_ms].into_iter().flatten() {
        head.extend(bitmap(col.iter().map(Option::is_some)));
    }
    tokens_and_duration(s, head);
}

fn tokens_and_duration(s: &RequestSamples, head: &mut Vec<u8>) {
    for col in [&s.input_tokens, &s.output_tokens].into_iter().flatten() {
        head.extend(bitmap(col.iter().map(Option::is_some)));
        for v in col.iter().flatten() {
            head.extend_from_slice(&v.to_le_bytes());
        }
    }
    if let Some(d) = s.duration_s {
        head.extend_from_slice(&d.to_le_bytes());
    }
}

/// One gzip member of `head` followed by `floats`, byte-plane-shuffled when `shuffle`.
fn gzip(head: &[u8], floats: &[f64], shuffle: bool) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(head).expect("writing to memory cannot fail");
    let bytes: Vec<[u8; 8]> = floats.iter().map(|f| f.to_le_bytes()).collect();
    if shuffle {
        for plane in 0..8 {
            let row: Vec<u8> = bytes.iter().map(|b| b[plane]).collect();
            gz.write_all(&row).expect("writing to memory cannot fail");
        }
    } else {
        gz.write_all(&bytes.concat())
            .expect("writing to memory cannot fail");
    }
    gz.finish().expect("writing to memory cannot fail")
}

fn gunzip(gz: &[u8], what: &str) -> Result<Vec<u8>, String> {
    let mut raw = Vec::new();
    GzDecoder::new(gz)
        .read_to_end(&mut raw)
        .map_err(|e| format!("{what}: not gzip: {e}"))?;
    Ok(raw)
}

/// Decodes what [`encode`] writes (version 2: `data` and `itl`) or wrote before (version 1:
/// `data` alone, `itl` `None`), with the `columns` asked for; `itl` is not looked at
/// without ITL. `Err` names what is wrong with corrupt data.
pub fn decode(
    data: &[u8],
    itl: Option<&[u8]>,
    columns: SampleColumns,
) -> Result<RequestSamples, String> {
    if let Some(part_a) = data.strip_prefix(MAGIC_V3) {
        return decode_v2_or_v3(part_a, itl, columns, true);
    }
    match data.strip_prefix(MAGIC_V2) {
        Some(part_a) => decode_v2_or_v3(part_a, itl, columns, false),
        None => {
            if itl.is_some() && columns == SampleColumns::All {
                return Err("version 1 data with chunk gaps apart".into());
            }
            let mut s = decode_v1(data)?;
            if columns == SampleColumns::WithoutItl {
                s.itl_ms = None;
            }
            Ok(s)
        }
    }
}

/// Versions 2 and 3 (`v3`: with the seconds byte and the gaps' seconds flag).
fn decode_v2_or_v3(
    part_a: &[u8],
    itl: Option<&[u8]>,
    columns: SampleColumns,
    v3: bool,
) -> Result<RequestSamples, String> {
    let raw = gunzip(part_a, "data")?;
    let mut r = Reader { buf: &raw, pos: 0 };
    let n = r.u32()? as usize;
    let flags = r.take(1)?[0];
    let seconds = if v3 { r.take(1)?[0] } else { 0 };
    let structure = Structure {
        success: r.bitmap(n)?,
        presence: r.presence(n, flags)?,
        tokens: r.tokens(n, flags)?,
        duration_s: r.duration(flags)?,
    };
    let mut latencies = unshuffle(r.take(structure.latency_count() * 8)?);
    r.end()?;
    let mut from = 0;
    for (present, bit) in structure.presence.iter().zip([TTFT, E2EL, TPOT]) {
        let count = present.iter().flatten().filter(|p| **p).count();
        if seconds & bit != 0 {
            to_ms(&mut latencies[from..from + count]);
        }
        from += count;
    }
    let mut samples = structure.samples(&mut latencies.into_iter());
    samples.itl_ms = match (columns, flags & ITL != 0, itl) {
        (SampleColumns::WithoutItl, _, _) | (SampleColumns::All, false, None) => None,
        (SampleColumns::All, false, Some(_)) => {
            return Err("chunk gaps stored for samples without an ITL column".into())
        }
        (SampleColumns::All, true, None) => return Err("the chunk gaps are missing".into()),
        (SampleColumns::All, true, Some(gz)) => Some(decode_gaps(gz, n, v3)?),
    };
    Ok(samples)
}

/// The chunk gaps of `n` requests from version 2's or 3's `itl_data`.
fn decode_gaps(gz: &[u8], n: usize, v3: bool) -> Result<Vec<Vec<f64>>, String> {
    let raw = gunzip(gz, "itl_data")?;
    let mut r = Reader { buf: &raw, pos: 0 };
    let in_seconds = match v3 {
        true => match r.take(1)?[0] {
            0 => false,
            1 => true,
            other => return Err(format!("itl_data: unknown unit flag {other}")),
        },
        false => false,
    };
    let counts = r.counts(n)?;
    let total = counts.iter().sum::<usize>();
    let mut gaps = unshuffle(r.take(total.checked_mul(8).ok_or("gap count overflows")?)?);
    r.end()?;
    if in_seconds {
        to_ms(&mut gaps);
    }
    Ok(gaps_by_request(counts, &mut gaps.into_iter()))
}

/// Each request's `counts[i]` gaps, taken from `gaps` in request order.
fn gaps_by_request(counts: Vec<usize>, gaps: &mut impl Iterator<Item = f64>) -> Vec<Vec<f64>> {
    counts
        .into_iter()
        .map(|c| gaps.by_ref().take(c).collect())
        .collect()
}

/// Decodes a version 1 blob (module docs), every column.
fn decode_v1(gz: &[u8]) -> Result<RequestSamples, String> {
    let raw = gunzip(gz, "version 1")?;
    let mut r = Reader { buf: &raw, pos: 0 };
    if r.take(4)? != MAGIC_V1 {
        return Err("not a BTS1 samples blob".into());
    }
    let n = r.u32()? as usize;
    let flags = r.take(1)?[0];
    let success = r.bitmap(n)?;
    let presence = r.presence(n, flags)?;
    let itl_counts = if flags & ITL != 0 {
        Some(r.counts(n)?)
    } else {
        None
    };
    let structure = Structure {
        success,
        presence,
        tokens: r.tokens(n, flags)?,
        duration_s: r.duration(flags)?,
    };
    let float_count = structure.latency_count() + itl_counts.iter().flatten().sum::<usize>();
    let mut floats =
        unshuffle(r.take(float_count.checked_mul(8).ok_or("count overflows")?)?).into_iter();
    r.end()?;
    let mut samples = structure.samples(&mut floats);
    samples.itl_ms = itl_counts.map(|counts| gaps_by_request(counts, &mut floats));
    Ok(samples)
}

/// The floats of byte-plane-shuffled `planes` (8 planes of equal length).
fn unshuffle(planes: &[u8]) -> Vec<f64> {
    let count = planes.len() / 8;
    // Plane after plane, each read in order: gathering a value's 8 bytes from 8 planes
    // `count` apart touched a new cache line per byte (a fifth of the compare page's time went
    // to decoding two runs' samples, BENCHMARKS.md "Session 33").
    let mut bits = vec![0u64; count];
    for (plane, row) in planes.chunks_exact(count.max(1)).enumerate() {
        for (b, byte) in bits.iter_mut().zip(row) {
            *b |= u64::from(*byte) << (8 * plane);
        }
    }
    bits.into_iter().map(f64::from_bits).collect()
}

/// What both versions store of the samples besides their floats (version 1 has its gap counts
/// among these too, read apart).
struct Structure {
    success: Vec<bool>,
    /// The presence bitmaps of TTFT, E2E latency and TPOT, `None` for a column not stored.
    presence: Vec<Option<Vec<bool>>>,
    tokens: [Option<Vec<Option<u64>>>; 2],
    duration_s: Option<f64>,
}

impl Structure {
    /// The number of latency values stored (present TTFT, E2E latency and TPOT values).
    fn latency_count(&self) -> usize {
        self.presence
            .iter()
            .flatten()
            .flatten()
            .filter(|p| **p)
            .count()
    }

    /// The samples without ITL: TTFT, E2E latency and TPOT, each present value taken from
    /// `latencies` in that order.
    fn samples(self, latencies: &mut impl Iterator<Item = f64>) -> RequestSamples {
        let mut presence = self.presence.into_iter();
        let mut column = || -> Option<Vec<Option<f64>>> {
            presence.next().flatten().map(|p| {
                p.into_iter()
                    .map(|p| if p { latencies.next() } else { None })
                    .collect()
            })
        };
        let (ttft_ms, e2el_ms, tpot_ms) = (column(), column(), column());
        let [input_tokens, output_tokens] = self.tokens;
        RequestSamples {
            success: self.success,
            ttft_ms,
            e2el_ms,
            tpot_ms,
            itl_ms: None,
            input_tokens,
            output_tokens,
            duration_s: self.duration_s,
        }
    }
}

fn bitmap(bits: impl Iterator<Item = bool>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, b) in bits.enumerate() {
        if i % 8 == 0 {
            out.push(0);
        }
        if b {
            *out.last_mut().unwrap() |= 1 << (i % 8);
        }
    }
    out
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, k: usize) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(k).filter(|e| *e <= self.buf.len());
        let end = end.ok_or("truncated samples blob")?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn bitmap(&mut self, n: usize) -> Result<Vec<bool>, String> {
        let bytes = self.take(n.div_ceil(8))?;
        Ok((0..n).map(|i| bytes[i / 8] & (1 << (i % 8)) != 0).collect())
    }
    /// The presence bitmaps of TTFT, E2E latency and TPOT, `None` for a column `flags` lacks.
    fn presence(&mut self, n: usize, flags: u8) -> Result<Vec<Option<Vec<bool>>>, String> {
        [TTFT, E2EL, TPOT]
            .into_iter()
            .map(|bit| (flags & bit != 0).then(|| self.bitmap(n)).transpose())
            .collect()
    }
    /// One `u32` count per request.
    fn counts(&mut self, n: usize) -> Result<Vec<usize>, String> {
        (0..n).map(|_| self.u32().map(|c| c as usize)).collect()
    }
    /// The input and output token columns `flags` names.
    fn tokens(&mut self, n: usize, flags: u8) -> Result<[Option<Vec<Option<u64>>>; 2], String> {
        let mut tokens = [None, None];
        for (slot, bit) in tokens.iter_mut().zip([INPUT, OUTPUT]) {
            if flags & bit != 0 {
                let present = self.bitmap(n)?;
                let mut col = Vec::with_capacity(n);
                for p in present {
                    col.push(if p { Some(self.u64()?) } else { None });
                }
                *slot = Some(col);
            }
        }
        Ok(tokens)
    }
    fn duration(&mut self, flags: u8) -> Result<Option<f64>, String> {
        (flags & DURATION != 0)
            .then(|| Ok(f64::from_le_bytes(self.take(8)?.try_into().unwrap())))
            .transpose()
    }
    /// `Err` unless every byte was read.
    fn end(&self) -> Result<(), String> {
        if self.pos == self.buf.len() {
            Ok(())
        } else {
            Err("trailing bytes".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchtrail_core::adapters::{read_files, FileSpec};

    fn example(name: &str) -> RequestSamples {
        let text = std::fs::read_to_string(format!(
            "{}/../examples/history/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let mut read = read_files(&[FileSpec {
            name,
            format: None,
            text: &text,
        }])
        .unwrap();
        read.remove(0).results.remove(0).samples.unwrap()
    }

    /// Bit-exact equality, NaN and -0.0 included.
    fn bits(s: &RequestSamples) -> String {
        format!("{s:?}")
            + &s.ttft_ms
                .iter()
                .chain(&s.e2el_ms)
                .chain(&s.tpot_ms)
                .flatten()
                .flatten()
                .chain(s.itl_ms.iter().flatten().flatten())
                .map(|v| format!("{:016x}", v.to_bits()))
                .collect::<String>()
    }

    /// What version 1's encoder wrote (session 33's `encode_with`), kept to test that rows
    /// stored before version 2 still read.
    fn encode_v1(s: &RequestSamples, shuffle: bool) -> Vec<u8> {
        let mut head: Vec<u8> = MAGIC_V1.to_vec();
        head.extend_from_slice(&(s.len() as u32).to_le_bytes());
        head.push(flags(s));
        head.extend(bitmap(s.success.iter().copied()));
        let mut floats: Vec<f64> = Vec::new();
        for col in [&s.ttft_ms, &s.e2el_ms, &s.tpot_ms].into_iter().flatten() {
            head.extend(bitmap(col.iter().map(Option::is_some)));
            floats.extend(col.iter().flatten());
        }
        if let Some(itl) = &s.itl_ms {
            for gaps in itl {
                head.extend_from_slice(&(gaps.len() as u32).to_le_bytes());
                floats.extend(gaps);
            }
        }
        tokens_and_duration(s, &mut head);
        gzip(&head, &floats, shuffle)
    }

    fn odd() -> RequestSamples {
        RequestSamples {
            success: vec![true, false, true],
            ttft_ms: Some(vec![Some(-0.0), None, Some(f64::MIN_POSITIVE)]),
            tpot_ms: Some(vec![None, None, Some(f64::INFINITY)]),
            itl_ms: Some(vec![vec![], vec![1e-300], vec![f64::NAN, 3.0]]),
            output_tokens: Some(vec![Some(u64::MAX), None, Some(0)]),
            duration_s: Some(12.5),
            ..Default::default()
        }
    }

    fn without_itl(s: &RequestSamples) -> RequestSamples {
        RequestSamples {
            itl_ms: None,
            ..s.clone()
        }
    }

    #[test]
    fn round_trips_bit_exactly() {
        let mut cases: Vec<RequestSamples> = [
            "goodput_baseline_s11_c4.json",
            "baseline_completions_c1_isl512_osl128.json",
        ]
        .into_iter()
        .map(example)
        .collect();
        cases.push(odd());
        cases.push(without_itl(&odd()));
        cases.push(RequestSamples::default());
        for s in &cases {
            let e = encode(s);
            assert!(e.data.starts_with(b"BTS3"));
            assert_eq!(e.itl.is_some(), s.itl_ms.is_some());
            let itl = e.itl.as_deref();
            assert_eq!(
                bits(&decode(&e.data, itl, SampleColumns::All).unwrap()),
                bits(s)
            );
            assert_eq!(
                bits(&decode(&e.data, itl, SampleColumns::WithoutItl).unwrap()),
                bits(&without_itl(s))
            );
            // Without ITL the gaps are not read: the pages pass none.
            assert_eq!(
                bits(&decode(&e.data, None, SampleColumns::WithoutItl).unwrap()),
                bits(&without_itl(s))
            );
        }
    }

    /// What version 2's encoder wrote (sessions 34–39), kept to test that its rows still read.
    fn encode_v2(s: &RequestSamples) -> EncodedSamples {
        let mut head = (s.len() as u32).to_le_bytes().to_vec();
        head.push(flags(s));
        structure(s, &mut head);
        let latencies: Vec<f64> = [&s.ttft_ms, &s.e2el_ms, &s.tpot_ms]
            .into_iter()
            .flatten()
            .flat_map(|col| col.iter().flatten().copied())
            .collect();
        let mut data = MAGIC_V2.to_vec();
        data.extend(gzip(&head, &latencies, true));
        let itl = s.itl_ms.as_ref().map(|itl| {
            let counts: Vec<u8> = itl
                .iter()
                .flat_map(|gaps| (gaps.len() as u32).to_le_bytes())
                .collect();
            let gaps: Vec<f64> = itl.iter().flatten().copied().collect();
            gzip(&counts, &gaps, true)
        });
        EncodedSamples { data, itl }
    }

    #[test]
    fn version_2_rows_still_read() {
        for s in [
            example("baseline_completions_c1_isl512_osl128.json"),
            odd(),
            without_itl(&odd()),
        ] {
            let e = encode_v2(&s);
            let itl = e.itl.as_deref();
            assert_eq!(
                bits(&decode(&e.data, itl, SampleColumns::All).unwrap()),
                bits(&s)
            );
            assert_eq!(
                bits(&decode(&e.data, None, SampleColumns::WithoutItl).unwrap()),
                bits(&without_itl(&s))
            );
        }
    }

    #[test]
    fn a_tools_latencies_are_stored_in_its_seconds() {
        // The real mock-server file: every TTFT, E2E latency and chunk gap the adapter made
        // milliseconds of reads back from seconds; TPOT, which the adapter derives, does too.
        let s = example("baseline_completions_c4_isl512_osl128.json");
        let e = encode(&s);
        let raw = gunzip(&e.data[4..], "data").unwrap();
        assert_eq!(raw[4], TTFT | E2EL | TPOT | ITL | INPUT | OUTPUT | DURATION);
        assert_eq!(raw[5], TTFT | E2EL | TPOT);
        let itl = e.itl.unwrap();
        assert_eq!(gunzip(&itl, "itl_data").unwrap()[0], 1);
        // Their low mantissa bytes are zeros again: (BTS2, BTS3) bytes of data and itl_data.
        let v2 = encode_v2(&s);
        assert_eq!(
            (
                v2.data.len(),
                v2.itl.unwrap().len(),
                e.data.len(),
                itl.len()
            ),
            (1_235, 40_742, 1_126, 33_909)
        );
    }

    #[test]
    fn a_value_that_does_not_come_back_from_seconds_keeps_its_column_in_ms() {
        // A millisecond value whose thousandth does not multiply back to it in doubles (the
        // test searches for one rather than assuming which).
        let odd_ms = (1..10_000)
            .map(|i| i as f64 * 0.0137)
            .find(|v| (v / 1000.0) * 1000.0 != *v)
            .expect("some value does not round-trip through seconds");
        let mut s = example("baseline_completions_c1_isl512_osl128.json");
        s.ttft_ms.as_mut().unwrap()[0] = Some(odd_ms);
        let e = encode(&s);
        let raw = gunzip(&e.data[4..], "data").unwrap();
        assert_eq!(raw[5], E2EL | TPOT);
        let read = decode(&e.data, e.itl.as_deref(), SampleColumns::All).unwrap();
        assert_eq!(bits(&read), bits(&s));
    }

    #[test]
    fn version_1_rows_still_read() {
        for s in [example("goodput_baseline_s11_c4.json"), odd()] {
            for shuffle in [true, false] {
                let blob = encode_v1(&s, shuffle);
                assert!(blob.starts_with(&[0x1f, 0x8b]), "gzip magic");
                let read = decode(&blob, None, SampleColumns::All).unwrap();
                if shuffle {
                    assert_eq!(bits(&read), bits(&s));
                } else {
                    // Version 1 was always written shuffled; unshuffled bytes read as other
                    // numbers, in the same structure.
                    assert_eq!(read.success, s.success);
                    assert_ne!(bits(&read), bits(&s));
                }
            }
            assert_eq!(
                bits(&decode(&encode_v1(&s, true), None, SampleColumns::WithoutItl).unwrap()),
                bits(&without_itl(&s))
            );
        }
    }

    #[test]
    fn corrupt_blobs_are_errors_that_say_why() {
        let e = encode(&odd());
        let (data, itl) = (e.data.as_slice(), e.itl.as_deref().unwrap());
        let err = |d: &[u8], i: Option<&[u8]>| decode(d, i, SampleColumns::All).unwrap_err();
        assert_eq!(
            err(b"neither BTS2 nor gzip", None),
            "version 1: not gzip: invalid gzip header"
        );
        assert_eq!(
            err(b"BTS2", Some(itl)),
            "data: not gzip: unexpected end of file"
        );
        assert_eq!(err(data, None), "the chunk gaps are missing");
        assert_eq!(
            err(&encode(&without_itl(&odd())).data, Some(itl)),
            "chunk gaps stored for samples without an ITL column"
        );
        assert_eq!(
            err(&encode_v1(&odd(), true), Some(itl)),
            "version 1 data with chunk gaps apart"
        );
        assert_eq!(
            err(data, Some(&itl[..itl.len() - 3])).split(':').next(),
            Some("itl_data")
        );
        // The gaps of other samples (another request count) do not read as these.
        let other = encode(&example("baseline_completions_c1_isl512_osl128.json"));
        assert_eq!(err(data, other.itl.as_deref()), "trailing bytes");
        // Damaged gaps do not matter to a reader that wants none.
        assert!(decode(data, Some(b"damaged"), SampleColumns::WithoutItl).is_ok());
    }

    #[test]
    fn sizes() {
        for name in [
            "goodput_baseline_s11_c4.json",
            "baseline_completions_c1_isl512_osl128.json",
        ] {
            let s = example(name);
            let n = s.len();
            let gaps: usize = s.itl_ms.iter().flatten().map(Vec::len).sum();
            // One row per request: result_id, idx, success, ttft, e2el, tpot, input, output as
            // 8-byte columns, ITL as a raw f64 blob.
            let rows = n * 8 * 8 + gaps * 8;
            let mut gz = GzEncoder::new(Vec::new(), Compression::default());
            gz.write_all(serde_json::to_string(&s).unwrap().as_bytes())
                .unwrap();
            let json_gz = gz.finish().unwrap().len();
            eprintln!(
                "{name}: {n} requests, {gaps} gaps: rows {rows} B (+{} B Postgres tuple headers), JSON+gzip {json_gz} B, \
                 BTS1 unshuffled {} B, BTS1 shuffled {} B, BTS2 (both columns) {} B, BTS3 {} B",
                n * 28,
                encode_v1(&s, false).len(),
                encode_v1(&s, true).len(),
                encode_v2(&s).data.len() + encode_v2(&s).itl.map_or(0, |i| i.len()),
                encode(&s).data.len() + encode(&s).itl.map_or(0, |i| i.len())
            );
        }
    }
}
