//! `webfetch._webfetch`: the native half of the Python package.
//!
//! It exposes one class, `Client`, whose `call` takes the tool arguments as JSON
//! and answers `(ok, json)`: the response JSON, or the FR-WF-18 error envelope;
//! `call_many` does the same for several URLs at once.
//! The `webfetch` package (pysrc/webfetch) turns that into a dict or a
//! `FetchError`, so the Python-facing API, its exception and its types live in
//! Python where editors and type checkers read them. The GIL is released for the
//! whole fetch, so other Python threads run meanwhile.

mod engine;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

use engine::{ConfigSource, Engine, OpenError};

/// A `web_fetch` tool with its runtime, caches and browser standby.
///
/// `close` shuts the parked Chromium down; a closed client refuses calls. Calls
/// in flight keep their engine alive until they finish.
#[pyclass(frozen, module = "webfetch._webfetch")]
struct Client {
    engine: Mutex<Option<Arc<Engine>>>,
}

#[pymethods]
impl Client {
    /// Loads the configuration (a file path, TOML text, or neither for the
    /// defaults) and starts the runtime. Raises `ValueError` for a configuration
    /// that cannot be loaded or disables the tool.
    #[new]
    #[pyo3(signature = (config_path=None, config_toml=None, browser_standby=true))]
    fn new(
        py: Python<'_>,
        config_path: Option<PathBuf>,
        config_toml: Option<String>,
        browser_standby: bool,
    ) -> PyResult<Client> {
        let source = match (config_path, config_toml) {
            (Some(_), Some(_)) => {
                return Err(PyTypeError::new_err(
                    "give config (a path) or config_toml (TOML text), not both",
                ));
            }
            (Some(path), None) => ConfigSource::File(path),
            (None, Some(text)) => ConfigSource::Toml(text),
            (None, None) => ConfigSource::Defaults,
        };
        let engine = py
            .detach(|| Engine::open(&source, browser_standby))
            .map_err(|error| match error {
                OpenError::Config(message) => PyValueError::new_err(message),
                OpenError::Runtime(message) => PyRuntimeError::new_err(message),
            })?;
        Ok(Client {
            engine: Mutex::new(Some(Arc::new(engine))),
        })
    }

    /// The configuration's start-up warnings.
    #[getter]
    fn warnings(&self) -> PyResult<Vec<String>> {
        Ok(self.engine()?.warnings().to_vec())
    }

    /// Runs one call on `args_json` (the tool arguments as a JSON object) with
    /// the GIL released; `max_output_bytes` of `None` is unlimited. Returns
    /// `(True, response_json)` or `(False, error_envelope_json)`.
    #[pyo3(signature = (args_json, max_output_bytes=None))]
    fn call(
        &self,
        py: Python<'_>,
        args_json: &str,
        max_output_bytes: Option<usize>,
    ) -> PyResult<(bool, String)> {
        let args: serde_json::Value = serde_json::from_str(args_json)
            .map_err(|error| PyValueError::new_err(format!("args_json: {error}")))?;
        let engine = self.engine()?;
        let max = max_output_bytes.unwrap_or(usize::MAX);
        Ok(match py.detach(move || engine.call(&args, max)) {
            Ok(json) => (true, json),
            Err(envelope) => (false, envelope),
        })
    }

    /// Runs one call per URL of `args_json` (`urls` and the options shared by
    /// every call, as a JSON object) with the GIL released, at most ten at once
    /// and the same URL once. Returns `(True, [(ok, json), ...])` in the order
    /// of `urls`, or `(False, error_envelope_json)` for arguments that are not
    /// a batch.
    #[pyo3(signature = (args_json, max_output_bytes=None))]
    fn call_many(
        &self,
        py: Python<'_>,
        args_json: &str,
        max_output_bytes: Option<usize>,
    ) -> PyResult<(bool, Vec<(bool, String)>, String)> {
        let args: serde_json::Value = serde_json::from_str(args_json)
            .map_err(|error| PyValueError::new_err(format!("args_json: {error}")))?;
        let engine = self.engine()?;
        let max = max_output_bytes.unwrap_or(usize::MAX);
        Ok(match py.detach(move || engine.call_many(&args, max)) {
            Ok(answers) => {
                let answers = answers
                    .into_iter()
                    .map(|answer| match answer {
                        Ok(json) => (true, json),
                        Err(envelope) => (false, envelope),
                    })
                    .collect();
                (true, answers, String::new())
            }
            Err(envelope) => (false, Vec::new(), envelope),
        })
    }

    /// Shuts the browser standby down (waiting until its Chromium and profile
    /// are gone) and refuses later calls. Idempotent.
    fn close(&self, py: Python<'_>) {
        let engine = self.lock().take();
        if let Some(engine) = engine {
            py.detach(move || engine.shutdown());
        }
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.lock().is_none()
    }
}

impl Client {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<Engine>>> {
        // A panic cannot leave the slot half-written: recover the guard.
        self.engine
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn engine(&self) -> PyResult<Arc<Engine>> {
        self.lock()
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("this WebFetch client is closed"))
    }
}

/// The extension module.
#[pymodule]
fn _webfetch(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Client>()?;
    Ok(())
}
