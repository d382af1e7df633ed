//! `--hardware auto`: accelerators from `nvidia-smi`, host CPU from `/proc/cpuinfo`.
//!
//! Policy for machines with **mixed GPU models**: an error (the series key holds one
//! accelerator model and a count, so any automatic choice would mislabel the run); state the
//! hardware with `--hardware FILE` or `--config` instead.

use benchtrail_core::config::Hardware;
use std::io::ErrorKind;
use std::process::Command;

/// The arguments `nvidia-smi` is run with; one GPU per output line:
/// `NVIDIA H100 80GB HBM3, 81559, 550.54.15` (name, memory in MiB, driver version).
pub const NVIDIA_SMI_ARGS: [&str; 2] = [
    "--query-gpu=name,memory.total,driver_version",
    "--format=csv,noheader,nounits",
];

/// One GPU line of `nvidia-smi`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpu {
    /// Model name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Total memory in MiB; `None` when nvidia-smi prints `[N/A]`.
    pub memory_mib: Option<u64>,
    /// Driver version; `None` when nvidia-smi prints `[N/A]`.
    pub driver_version: Option<String>,
}

/// Parses the output of `nvidia-smi` run with [`NVIDIA_SMI_ARGS`]: one GPU per non-blank line.
///
/// # Errors
/// A line without three comma-separated fields, an empty name, or a memory that is neither an
/// integer nor `[N/A]`; the message quotes the line.
pub fn parse_gpu_list(csv: &str) -> Result<Vec<Gpu>, String> {
    let mut gpus = Vec::new();
    for line in csv.lines().map(str::trim).filter(|l| !l.is_empty()) {
        // The name comes first and is the only field that could hold a comma.
        let mut fields = line.rsplitn(3, ',').map(str::trim);
        let (driver, memory, name) = match (fields.next(), fields.next(), fields.next()) {
            (Some(d), Some(m), Some(n)) if !n.is_empty() => (d, m, n),
            _ => return Err(format!("unexpected nvidia-smi line `{line}`: expected `name, memory.total, driver_version`")),
        };
        let memory_mib = match not_available(memory) {
            None => None,
            Some(m) => Some(m.parse::<u64>().map_err(|_| {
                format!("unexpected memory.total `{m}` in nvidia-smi line `{line}`")
            })?),
        };
        gpus.push(Gpu {
            name: name.to_string(),
            memory_mib,
            driver_version: not_available(driver).map(str::to_string),
        });
    }
    Ok(gpus)
}

/// `None` for nvidia-smi's "not available" spellings (`[N/A]`, `N/A`, empty).
fn not_available(field: &str) -> Option<&str> {
    match field {
        "" | "[N/A]" | "N/A" | "[Not Supported]" => None,
        f => Some(f),
    }
}

/// The accelerator fields of [`Hardware`] for a list of GPUs: model of the first, count of all,
/// memory (MiB) and driver of the first. `Ok(None)` for an empty list.
///
/// # Errors
/// The GPUs are not all the same model (the message lists each model with its count).
pub fn hardware_from_gpus(gpus: &[Gpu]) -> Result<Option<Hardware>, String> {
    let Some(first) = gpus.first() else {
        return Ok(None);
    };
    if gpus.iter().any(|g| g.name != first.name) {
        let mut models: Vec<(&str, usize)> = Vec::new();
        for g in gpus {
            match models.iter_mut().find(|(n, _)| *n == g.name) {
                Some((_, count)) => *count += 1,
                None => models.push((&g.name, 1)),
            }
        }
        let list = models
            .iter()
            .map(|(n, c)| format!("{c} × {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(format!(
            "nvidia-smi lists mixed GPU models ({list}); state the hardware with --hardware FILE or --config"
        ));
    }
    Ok(Some(Hardware {
        accelerator: Some(first.name.clone()),
        accelerator_count: Some(gpus.len() as u64),
        accelerator_memory_mib: first.memory_mib,
        driver_version: first.driver_version.clone(),
        ..Hardware::default()
    }))
}

/// The first `model name` of a `/proc/cpuinfo` text, e.g. `AMD EPYC 9454 48-Core Processor`.
/// `None` when there is none (some ARM kernels print no model name).
pub fn host_cpu(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == "model name" && !value.trim().is_empty()).then(|| value.trim().to_string())
    })
}

/// What `--hardware auto` found, and notes for stderr.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Detected {
    /// The hardware found (possibly only `host_cpu`).
    pub hardware: Hardware,
    /// Things the user should know (e.g. `nvidia-smi` absent).
    pub notes: Vec<String>,
}

/// Detects the hardware of this machine: runs `nvidia-smi` (found on `PATH`) with
/// [`NVIDIA_SMI_ARGS`] and reads `/proc/cpuinfo`.
///
/// # Errors
/// `nvidia-smi` exists but fails or prints something unexpected, or lists mixed models.
/// An absent `nvidia-smi` is not an error: the accelerator fields stay unset, with a note.
pub fn detect() -> Result<Detected, String> {
    let mut detected = Detected::default();
    match Command::new("nvidia-smi").args(NVIDIA_SMI_ARGS).output() {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            detected
                .notes
                .push("nvidia-smi not found on PATH: no accelerator recorded".to_string());
        }
        Err(e) => return Err(format!("could not run nvidia-smi: {e}")),
        Ok(out) if !out.status.success() => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let said = [stderr.trim(), stdout.trim()]
                .into_iter()
                .find(|s| !s.is_empty())
                .unwrap_or("no output");
            return Err(format!("nvidia-smi failed ({}): {said}", out.status));
        }
        Ok(out) => {
            let gpus = parse_gpu_list(&String::from_utf8_lossy(&out.stdout))?;
            match hardware_from_gpus(&gpus)? {
                Some(h) => detected.hardware = h,
                None => detected
                    .notes
                    .push("nvidia-smi lists no GPU: no accelerator recorded".to_string()),
            }
        }
    }
    detected.hardware.host_cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .as_deref()
        .and_then(host_cpu);
    Ok(detected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_h100() {
        let csv = "NVIDIA H100 80GB HBM3, 81559, 550.54.15\n".repeat(8);
        let gpus = parse_gpu_list(&csv).unwrap();
        assert_eq!(gpus.len(), 8);
        assert_eq!(
            gpus[7],
            Gpu {
                name: "NVIDIA H100 80GB HBM3".into(),
                memory_mib: Some(81559),
                driver_version: Some("550.54.15".into())
            }
        );
        assert_eq!(
            hardware_from_gpus(&gpus).unwrap(),
            Some(Hardware {
                accelerator: Some("NVIDIA H100 80GB HBM3".into()),
                accelerator_count: Some(8),
                accelerator_memory_mib: Some(81559),
                driver_version: Some("550.54.15".into()),
                cuda_version: None,
                host_cpu: None,
            })
        );
    }

    #[test]
    fn one_l4_with_crlf_and_blank_lines() {
        let gpus = parse_gpu_list("\r\nNVIDIA L4, 23034, 535.183.01\r\n\n").unwrap();
        let h = hardware_from_gpus(&gpus).unwrap().unwrap();
        assert_eq!(h.accelerator.as_deref(), Some("NVIDIA L4"));
        assert_eq!(h.accelerator_count, Some(1));
        assert_eq!(h.accelerator_memory_mib, Some(23034));
        assert_eq!(h.driver_version.as_deref(), Some("535.183.01"));
    }

    #[test]
    fn not_available_fields_are_unset() {
        let gpus = parse_gpu_list("NVIDIA GH200 480GB, [N/A], 560.35.03\n").unwrap();
        assert_eq!(gpus[0].memory_mib, None);
        assert_eq!(gpus[0].driver_version.as_deref(), Some("560.35.03"));
    }

    #[test]
    fn empty_output_is_no_gpu() {
        assert_eq!(parse_gpu_list("\n").unwrap(), vec![]);
        assert_eq!(hardware_from_gpus(&[]).unwrap(), None);
    }

    #[test]
    fn malformed_lines_are_errors() {
        assert_eq!(
            parse_gpu_list("No devices were found").unwrap_err(),
            "unexpected nvidia-smi line `No devices were found`: expected `name, memory.total, driver_version`"
        );
        assert_eq!(
            parse_gpu_list("NVIDIA L4, 23034 MiB, 535.183.01").unwrap_err(),
            "unexpected memory.total `23034 MiB` in nvidia-smi line `NVIDIA L4, 23034 MiB, 535.183.01`"
        );
    }

    #[test]
    fn mixed_models_are_an_error() {
        let csv = "NVIDIA H100 80GB HBM3, 81559, 550.54.15\nNVIDIA L4, 23034, 550.54.15\nNVIDIA H100 80GB HBM3, 81559, 550.54.15\n";
        let gpus = parse_gpu_list(csv).unwrap();
        assert_eq!(
            hardware_from_gpus(&gpus).unwrap_err(),
            "nvidia-smi lists mixed GPU models (2 × NVIDIA H100 80GB HBM3, 1 × NVIDIA L4); \
             state the hardware with --hardware FILE or --config"
        );
    }

    #[test]
    fn host_cpu_is_the_first_model_name() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9454 48-Core Processor\n\n\
                       processor\t: 1\nmodel name\t: something else\n";
        assert_eq!(
            host_cpu(cpuinfo).as_deref(),
            Some("AMD EPYC 9454 48-Core Processor")
        );
        assert_eq!(host_cpu("processor\t: 0\nBogoMIPS\t: 2000.00\n"), None);
    }
}
