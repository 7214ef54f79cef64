//! Selection by measurement: `gpuio bench` stores, per machine, how fast each pair
//! answered the whole-device work (every SM × 1024 threads, each a write, a read
//! and a printf), and [`Runtime::probe`](crate::Runtime::probe) ranks a backend's
//! transports by those figures when they were measured on the same device.
//!
//! The file is `$XDG_CACHE_HOME/gpuio/calibration.json` (else
//! `~/.cache/gpuio/calibration.json`); `GPUIO_CALIBRATION=<path>` names another
//! and `GPUIO_CALIBRATION=off` ignores it. Only the order of one backend's
//! transports changes: every GPU pair still ranks above every CPU pair, and
//! `GPUIO_BACKEND` still overrides. `gpuio probe` says where each score came from.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The environment variable naming the calibration file, or `off`.
pub const CALIBRATION_ENV: &str = "GPUIO_CALIBRATION";

/// One measured pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// `backend/transport`.
    pub pair: String,
    /// The device as the backend's probe describes it; figures apply only to it.
    pub device: String,
    /// Whole-device requests per second.
    pub requests_per_s: f64,
    /// How many of the launch's threads made the whole round trip.
    pub threads_done: u64,
    pub threads: u64,
    /// Seconds since the Unix epoch.
    pub measured_at: u64,
}

/// What `gpuio bench` stored.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub pairs: Vec<Measured>,
}

/// Why a calibration file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a gpuio calibration: {source}")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

impl Calibration {
    /// Where the calibration lives, or `None` when it is switched off (or no cache
    /// directory can be named).
    pub fn path() -> Option<PathBuf> {
        match std::env::var_os(CALIBRATION_ENV) {
            Some(v) if v == "off" => None,
            Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
            _ => gpuio_device::header::cache_root(
                std::env::var_os("XDG_CACHE_HOME"),
                std::env::var_os("HOME"),
            )
            .map(|r| r.join("calibration.json")),
        }
    }

    /// The calibration at `path`; an absent file is an empty calibration.
    pub fn load(path: &Path) -> Result<Self, CalibrationError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(CalibrationError::Io {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        serde_json::from_str(&text).map_err(|source| CalibrationError::Parse {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Writes the calibration to `path` (atomically: a temporary file, then a rename).
    pub fn save(&self, path: &Path) -> Result<(), CalibrationError> {
        let io = |source| CalibrationError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text =
            serde_json::to_string_pretty(self).map_err(|source| CalibrationError::Parse {
                path: path.to_path_buf(),
                source,
            })?;
        let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Replaces the figures of the pairs in `measured` (other pairs are kept).
    pub fn record(&mut self, measured: Vec<Measured>) {
        self.pairs
            .retain(|old| !measured.iter().any(|m| m.pair == old.pair));
        self.pairs.extend(measured);
    }

    /// The figure of `pair` measured on `device`, if any.
    pub fn figure(&self, pair: &str, device: &str) -> Option<&Measured> {
        self.pairs
            .iter()
            .find(|m| m.pair == pair && m.device == device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pair: &str, rate: f64) -> Measured {
        Measured {
            pair: pair.into(),
            device: "dev".into(),
            requests_per_s: rate,
            threads_done: 10,
            threads: 10,
            measured_at: 1,
        }
    }

    #[test]
    fn a_calibration_round_trips_through_its_file_and_a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/calibration.json");
        assert_eq!(Calibration::load(&path).unwrap(), Calibration::default());
        let mut c = Calibration::default();
        c.record(vec![m("cpu/direct", 5.0), m("cpu/mailbox", 9.0)]);
        c.save(&path).unwrap();
        assert_eq!(Calibration::load(&path).unwrap(), c);
    }

    #[test]
    fn recording_a_pair_again_replaces_its_figure_and_keeps_the_others() {
        let mut c = Calibration::default();
        c.record(vec![m("cpu/direct", 5.0), m("cpu/mailbox", 9.0)]);
        c.record(vec![m("cpu/direct", 7.0)]);
        assert_eq!(c.figure("cpu/direct", "dev").unwrap().requests_per_s, 7.0);
        assert_eq!(c.figure("cpu/mailbox", "dev").unwrap().requests_per_s, 9.0);
        assert!(c.figure("cpu/mailbox", "another device").is_none());
    }

    #[test]
    fn a_file_that_is_not_a_calibration_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calibration.json");
        std::fs::write(&path, "not json").unwrap();
        let e = Calibration::load(&path).unwrap_err();
        assert!(e.to_string().contains("calibration.json"), "{e}");
    }
}
