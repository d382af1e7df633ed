//! The stored encoding of per-request samples (`result_samples.data`), version 1.
//!
//! It lives in storage, not in core: it is a storage detail that nothing else reads, and
//! flate2 is a server dependency already.
//!
//! Layout before compression, little-endian throughout:
//! - a *structure* part: magic `BTS1`, request count `u32`, a column-flags byte, the success
//!   bitmap, then per present column a presence bitmap (requests with a value); for `itl` one
//!   `u32` gap count per request; token counts as `u64`; the duration as `f64`;
//! - a *float* part: every latency value (`f64`), column after column, stored
//!   **byte-plane-shuffled** (all first bytes, then all second bytes, ...), which groups the
//!   similar sign/exponent bytes of nearby latencies so that deflate finds runs in them.
//!
//! The whole is gzip-compressed (flate2, default level). Values round-trip bit-exactly
//! (`f64::to_le_bytes`/`from_le_bytes`; tested below).
//!
//! Why this encoding, measured on `examples/history` (vLLM `--save-detailed`):
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
//!
//! (`cargo test -p benchtrail-server --lib samples_codec -- --nocapture` prints the figures.)

use benchtrail_core::samples::RequestSamples;
use flate2::{read::GzDecoder, write::GzEncoder, Compression};
use std::io::{Read, Write};

/// The `result_samples.encoding` value of this encoding.
pub const ENCODING: &str = "bts1-gzip";

const MAGIC: &[u8; 4] = b"BTS1";

const TTFT: u8 = 1;
const E2EL: u8 = 2;
const TPOT: u8 = 4;
const ITL: u8 = 8;
const INPUT: u8 = 16;
const OUTPUT: u8 = 32;
const DURATION: u8 = 64;

/// Encodes samples (gzip'd).
pub fn encode(s: &RequestSamples) -> Vec<u8> {
    encode_with(s, true)
}

fn encode_with(s: &RequestSamples, shuffle: bool) -> Vec<u8> {
    let n = s.len();
    let mut head: Vec<u8> = MAGIC.to_vec();
    head.extend_from_slice(&(n as u32).to_le_bytes());
    let flags = [
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
    .fold(0u8, |acc, (_, bit)| acc | bit);
    head.push(flags);
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
    for col in [&s.input_tokens, &s.output_tokens].into_iter().flatten() {
        head.extend(bitmap(col.iter().map(Option::is_some)));
        for v in col.iter().flatten() {
            head.extend_from_slice(&v.to_le_bytes());
        }
    }
    if let Some(d) = s.duration_s {
        head.extend_from_slice(&d.to_le_bytes());
    }
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&head).expect("writing to memory cannot fail");
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

/// Decodes what [`encode`] wrote. `Err` names what is wrong with corrupt data.
pub fn decode(gz: &[u8]) -> Result<RequestSamples, String> {
    let mut raw = Vec::new();
    GzDecoder::new(gz)
        .read_to_end(&mut raw)
        .map_err(|e| format!("not gzip: {e}"))?;
    let mut r = Reader { buf: &raw, pos: 0 };
    if r.take(4)? != MAGIC {
        return Err("not a BTS1 samples blob".into());
    }
    let n = r.u32()? as usize;
    let flags = r.take(1)?[0];
    let success = r.bitmap(n)?;
    let mut presence: Vec<Vec<bool>> = Vec::new();
    let mut float_count = 0;
    for bit in [TTFT, E2EL, TPOT] {
        if flags & bit != 0 {
            let p = r.bitmap(n)?;
            float_count += p.iter().filter(|x| **x).count();
            presence.push(p);
        }
    }
    let itl_counts: Option<Vec<usize>> = if flags & ITL != 0 {
        let counts = (0..n)
            .map(|_| r.u32().map(|c| c as usize))
            .collect::<Result<Vec<_>, _>>()?;
        float_count += counts.iter().sum::<usize>();
        Some(counts)
    } else {
        None
    };
    let mut tokens = [None, None];
    for (slot, bit) in tokens.iter_mut().zip([INPUT, OUTPUT]) {
        if flags & bit != 0 {
            let p = r.bitmap(n)?;
            let mut col = Vec::with_capacity(n);
            for present in p {
                col.push(if present { Some(r.u64()?) } else { None });
            }
            *slot = Some(col);
        }
    }
    let duration_s = if flags & DURATION != 0 {
        Some(f64::from_le_bytes(r.take(8)?.try_into().unwrap()))
    } else {
        None
    };
    let planes = r.take(float_count * 8)?;
    if r.pos != raw.len() {
        return Err("trailing bytes".into());
    }
    // Plane after plane, each read in order: gathering a value's 8 bytes from 8 planes
    // `float_count` apart touched a new cache line per byte (a fifth of the compare page's
    // time went to decoding two runs' samples).
    let mut bits = vec![0u64; float_count];
    for (plane, row) in planes.chunks_exact(float_count.max(1)).enumerate() {
        for (b, byte) in bits.iter_mut().zip(row) {
            *b |= u64::from(*byte) << (8 * plane);
        }
    }
    let mut floats = bits.into_iter().map(f64::from_bits);
    let mut presence = presence.into_iter();
    let mut column = |bit: u8| -> Option<Vec<Option<f64>>> {
        (flags & bit != 0).then(|| {
            presence
                .next()
                .unwrap()
                .into_iter()
                .map(|p| if p { floats.next() } else { None })
                .collect()
        })
    };
    let ttft_ms = column(TTFT);
    let e2el_ms = column(E2EL);
    let tpot_ms = column(TPOT);
    let itl_ms = itl_counts.map(|counts| {
        counts
            .into_iter()
            .map(|c| floats.by_ref().take(c).collect())
            .collect()
    });
    let [input_tokens, output_tokens] = tokens;
    Ok(RequestSamples {
        success,
        ttft_ms,
        e2el_ms,
        tpot_ms,
        itl_ms,
        input_tokens,
        output_tokens,
        duration_s,
    })
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

    #[test]
    fn round_trips_bit_exactly() {
        for name in [
            "goodput_baseline_s11_c4.json",
            "baseline_completions_c1_isl512_osl128.json",
        ] {
            let s = example(name);
            assert_eq!(bits(&decode(&encode(&s)).unwrap()), bits(&s), "{name}");
        }
        let odd = RequestSamples {
            success: vec![true, false, true],
            ttft_ms: Some(vec![Some(-0.0), None, Some(f64::MIN_POSITIVE)]),
            itl_ms: Some(vec![vec![], vec![1e-300], vec![f64::NAN, 3.0]]),
            output_tokens: Some(vec![Some(u64::MAX), None, Some(0)]),
            duration_s: None,
            ..Default::default()
        };
        assert_eq!(bits(&decode(&encode(&odd)).unwrap()), bits(&odd));
        assert_eq!(
            decode(&encode(&RequestSamples::default())).unwrap(),
            RequestSamples::default()
        );
        assert!(decode(b"nonsense").is_err());
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
                 BTS1 unshuffled {} B, BTS1 shuffled {} B",
                n * 28,
                encode_with(&s, false).len(),
                encode(&s).len()
            );
        }
    }
}
