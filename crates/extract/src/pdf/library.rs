//! Finding libpdfium and binding to it, once per process.
//!
//! pdfium is not linked into the program: it is a shared library (`libpdfium.so`,
//! `libpdfium.dylib`, `pdfium.dll`) loaded when the first PDF is read, so only the extraction
//! worker ever has it in memory. It is looked for, in order:
//!
//! 1. `ARTIFACTFLOW_PDFIUM`: the library file, or a folder holding it (when it is set, nowhere
//!    else: a wrong setting is reported, not passed over);
//! 2. beside the running program, then in the folder above it (an installed app keeps it beside
//!    `artifactflow-extract`);
//! 3. in a `pdfium/` folder above the program: `target/pdfium/`, where `scripts/setup.sh`
//!    unpacks it, seen from `target/debug/` and from test programs in `target/debug/deps/`.
//!
//! pdfium-render binds by symbol name with its `pdfium_8125` API set; the build shipped
//! (pdfium 8149, from the pypdfium2 wheel pinned in `scripts/pdfium.lock`) has every symbol of
//! that set.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pdfium_render::prelude::Pdfium;

use crate::error::{ErrorKind, ExtractError};

/// The environment variable that names the library (or its folder).
pub const PDFIUM_ENV: &str = "ARTIFACTFLOW_PDFIUM";

/// The process's pdfium, bound on first use; the same error on every use when it cannot be.
pub fn pdfium() -> Result<&'static Pdfium, ExtractError> {
    static PDFIUM: OnceLock<Result<Pdfium, ExtractError>> = OnceLock::new();
    PDFIUM.get_or_init(bind).as_ref().map_err(Clone::clone)
}

fn bind() -> Result<Pdfium, ExtractError> {
    let candidates = candidates();
    let Some(path) = candidates.iter().find(|p| p.is_file()) else {
        let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        return Err(ExtractError::new(
            ErrorKind::Engine,
            format!(
                "the PDF engine (libpdfium) is not installed: looked for {}; reinstall \
                 ArtifactFlow (in a source checkout: run scripts/setup.sh), or set \
                 {PDFIUM_ENV} to the library's path",
                looked.join(", ")
            ),
        ));
    };
    let bindings = Pdfium::bind_to_library(path).map_err(|e| {
        ExtractError::new(
            ErrorKind::Engine,
            format!(
                "the PDF engine at {} could not be loaded ({e:?}): it may be damaged or for \
                 another system; run scripts/setup.sh again",
                path.display()
            ),
        )
    })?;
    Ok(Pdfium::new(bindings))
}

/// Where the library is looked for, in order (see the module docs).
pub fn candidates() -> Vec<PathBuf> {
    let name = Pdfium::pdfium_platform_library_name();
    if let Some(value) = std::env::var_os(PDFIUM_ENV).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(value);
        return vec![if path.is_dir() {
            path.join(&name)
        } else {
            path
        }];
    }
    let mut out = Vec::new();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        out.push(dir.join(&name));
        if let Some(parent) = dir.parent() {
            out.push(parent.join(&name));
        }
        for ancestor in dir.ancestors().skip(1).take(2) {
            out.push(ancestor.join("pdfium").join(&name));
        }
    }
    out
}
