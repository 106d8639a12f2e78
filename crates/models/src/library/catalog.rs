//! The catalogue: a short list of small instruct models that call tools, each with where it is
//! on the Hub, its licence, context and the memory it needs, and whether it fits this machine.
//!
//! The list is `catalog.json`, built into the binary. Sizes there are what the files weighed
//! when the list was written, for the fit check before anything is asked of the Hub; a pull uses
//! the Hub's own size and sha256 (and, where an entry pins a sha256, insists on it).
//!
//! **What a pulled file really is.** A pull of an entry records the entry's id beside the file;
//! the listing then compares the file with the entry ([`mismatch`]): a header of another
//! architecture, or a size more than [`SIZE_TOLERANCE`] away from the entry's, is a
//! [`CatalogMismatch`] that says what the file is (a mirror serving another file under the
//! entry's name, a repository whose file changed). The file stays installed under its name; the
//! front ends show the sentence wherever they show the model.

use std::path::Path;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

/// A model of the catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CatalogEntry {
    /// A short id (`qwen3-1.7b`): what `models pull` takes.
    pub id: String,
    /// Its name for people.
    pub name: String,
    /// The Hub repository.
    pub repo: String,
    /// The GGUF file of that repository.
    pub file: String,
    /// Its parameter count, as its makers state it.
    pub params: String,
    /// The quantisation of that file.
    pub quantization: String,
    /// The architecture its GGUF header names (`general.architecture`: `qwen3`, `llama`,
    /// `gemma3`…).
    pub architecture: String,
    /// The file's size in bytes when the list was written.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub size: u64,
    /// The sha256 the file must have, when pinned.
    #[serde(default)]
    pub sha256: Option<String>,
    /// Its licence.
    pub license: String,
    /// The context it was trained for, in tokens.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub context: u64,
    /// The memory it needs to run with a useful context, in bytes.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub min_memory: u64,
    /// The order of preference for an agent that calls tools (1 first).
    pub rank: u32,
    /// One line about it.
    pub about: String,
    /// The built-in tool-use check's result on this file, when its makers of the catalogue ran
    /// it (`artifactflow-cli models check ID`); a check run on this computer counts over it.
    #[serde(default)]
    pub published_check: Option<CheckScore>,
}

/// A tool-use check's result in short: how many of its items a model answered as asked, in
/// the mode and guidance that did best.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CheckScore {
    /// Items answered as asked.
    pub as_asked: u32,
    /// Items asked.
    pub items: u32,
    /// `text` or `native`.
    pub mode: String,
    /// Guided calls.
    pub guided: bool,
    /// Where and when it was measured, for people (empty for a check of this computer).
    #[serde(default)]
    pub measured: String,
}

impl CheckScore {
    /// The share answered as asked (0 with no items).
    pub fn score(&self) -> f64 {
        if self.items == 0 {
            0.0
        } else {
            f64::from(self.as_asked) / f64::from(self.items)
        }
    }

    /// `87 %`, rounded down (a score never looks better than it was).
    pub fn percent(&self) -> String {
        format!("{} %", (self.score() * 100.0).floor() as u32)
    }
}

static CATALOG: LazyLock<Vec<CatalogEntry>> = LazyLock::new(|| {
    let mut entries: Vec<CatalogEntry> =
        serde_json::from_str(include_str!("catalog.json")).expect("catalog.json is valid");
    entries.sort_by_key(|e| e.rank);
    entries
});

/// The catalogue, in order of preference.
pub fn catalog() -> &'static [CatalogEntry] {
    &CATALOG
}

/// What this machine has for running models.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Machine {
    /// Installed memory, in bytes.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub total_memory: u64,
    /// Memory free now, in bytes.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub available_memory: u64,
    /// Free disk where models go, in bytes.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub free_disk: u64,
    /// CPU cores (physical when known).
    pub cores: u32,
}

impl Machine {
    /// Read this machine, with the free disk of `models_dir` (or of the nearest folder above it
    /// that exists).
    pub fn read(models_dir: &Path) -> Machine {
        let mut sys = sysinfo::System::new();
        sys.refresh_memory();
        let mut dir = models_dir;
        let free_disk = loop {
            match fs4::available_space(dir) {
                Ok(n) => break n,
                Err(_) => match dir.parent() {
                    Some(p) => dir = p,
                    None => break 0,
                },
            }
        };
        let cores = sysinfo::System::physical_core_count()
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
            .unwrap_or(1);
        Machine {
            total_memory: sys.total_memory(),
            available_memory: sys.available_memory(),
            free_disk,
            cores: cores as u32,
        }
    }
}

/// How well a model fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Fit {
    /// Runs comfortably beside other programs.
    Good,
    /// Runs, with little memory left for anything else.
    Tight,
    /// Needs more memory than this machine has.
    TooBig,
    /// Not enough free disk to download it.
    NoDisk,
}

/// A fit with its reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FitCheck {
    /// The verdict.
    pub fit: Fit,
    /// Why, in a sentence.
    pub reason: String,
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// How a model of `size` bytes that needs `min_memory` fits `machine`.
pub fn fit(size: u64, min_memory: u64, machine: &Machine) -> FitCheck {
    if size.saturating_add(64 << 20) > machine.free_disk {
        return FitCheck {
            fit: Fit::NoDisk,
            reason: format!(
                "needs {} of disk, {} free",
                gib(size),
                gib(machine.free_disk)
            ),
        };
    }
    if min_memory > machine.total_memory {
        return FitCheck {
            fit: Fit::TooBig,
            reason: format!(
                "needs {} of memory, this computer has {}",
                gib(min_memory),
                gib(machine.total_memory)
            ),
        };
    }
    // Comfortable: it leaves at least 40 % of the memory to the rest of the system.
    if min_memory as f64 <= machine.total_memory as f64 * 0.6 {
        FitCheck {
            fit: Fit::Good,
            reason: format!(
                "needs {} of {} memory",
                gib(min_memory),
                gib(machine.total_memory)
            ),
        }
    } else {
        FitCheck {
            fit: Fit::Tight,
            reason: format!(
                "needs {} of {} memory: close other programs while it runs",
                gib(min_memory),
                gib(machine.total_memory)
            ),
        }
    }
}

/// The memory a GGUF file of `size` bytes needs to run: the weights, plus a context and the
/// runtime's own (a rule of thumb: a fifth more, and half a gigabyte).
pub fn memory_for_file(size: u64) -> u64 {
    size.saturating_add(size / 5).saturating_add(512 << 20)
}

/// The entry to recommend on `machine`, by the checks the catalogue publishes (see
/// [`recommend_by`]).
pub fn recommend(machine: &Machine) -> Option<&'static CatalogEntry> {
    recommend_by(machine, |e| e.published_check.clone()).map(|r| r.entry)
}

/// A recommendation and the reason for it, in a sentence.
#[derive(Debug, Clone)]
pub struct Recommendation {
    /// The entry.
    pub entry: &'static CatalogEntry,
    /// Why this one, for people.
    pub reason: String,
}

/// The entry to recommend on `machine`. Among the entries that fit comfortably (else, when none
/// does, those that fit at all), the one whose tool-use check (`check`: this computer's or the
/// published one) answered the most items as asked, the more preferred on a tie. When none of
/// them was checked: the most preferred that fits comfortably, else the smallest that fits.
pub fn recommend_by(
    machine: &Machine,
    check: impl Fn(&CatalogEntry) -> Option<CheckScore>,
) -> Option<Recommendation> {
    let entries = catalog();
    let fitting = |want: Fit| -> Vec<&'static CatalogEntry> {
        entries
            .iter()
            .filter(|e| fit(e.size, e.min_memory, machine).fit == want)
            .collect()
    };
    let mut candidates = fitting(Fit::Good);
    let comfortable = !candidates.is_empty();
    if !comfortable {
        candidates = fitting(Fit::Tight);
    }
    // `entries` is in rank order, so the first of the best scores is the more preferred.
    let mut best: Option<(&'static CatalogEntry, CheckScore)> = None;
    for entry in &candidates {
        if let Some(score) = check(entry) {
            if best.as_ref().is_none_or(|(_, b)| score.score() > b.score()) {
                best = Some((entry, score));
            }
        }
    }
    if let Some((entry, score)) = best {
        let where_ = if score.measured.is_empty() {
            "on this computer".to_string()
        } else {
            score.measured.clone()
        };
        return Some(Recommendation {
            entry,
            reason: format!(
                "the best tool-use check of the models that fit{}: {} of {} items as asked ({} calls{}, measured {where_})",
                if comfortable { "" } else { " (none fits comfortably)" },
                score.percent(),
                score.items,
                score.mode,
                if score.guided { ", guided" } else { "" },
            ),
        });
    }
    let entry = if comfortable {
        candidates.first().copied()
    } else {
        candidates.iter().copied().min_by_key(|e| e.min_memory)
    }?;
    Some(Recommendation {
        entry,
        reason: if comfortable {
            "no model that fits has a tool-use check yet: the catalogue's first choice of those that fit comfortably".into()
        } else {
            "no model that fits has a tool-use check yet, and none fits comfortably: the smallest that fits".into()
        },
    })
}

/// How far a pulled file's size may be from its entry's and still be that entry's file: 1 %. A
/// repository that fixes a file's chat template changes its size by kilobytes; another
/// quantisation or another model differs by far more.
pub const SIZE_TOLERANCE: f64 = 0.01;

/// A pulled file that is not what its catalogue entry describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CatalogMismatch {
    /// The entry's id.
    pub entry: String,
    /// The entry's name for people.
    pub entry_name: String,
    /// The architecture the entry lists.
    pub expected_architecture: String,
    /// The size the entry lists, in bytes.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub expected_size: u64,
    /// The architecture the file's header names.
    pub architecture: Option<String>,
    /// The file's size, in bytes.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub size: u64,
    /// What the file really is, in a sentence for people.
    pub message: String,
}

/// How a file of `size` bytes whose header names `architecture`, pulled for `entry`, differs
/// from it: `None` when it is the entry's file (the same architecture, and a size within
/// [`SIZE_TOLERANCE`]).
pub fn mismatch(
    entry: &CatalogEntry,
    size: u64,
    architecture: Option<&str>,
) -> Option<CatalogMismatch> {
    let other_architecture =
        architecture.is_some_and(|a| !a.eq_ignore_ascii_case(&entry.architecture));
    let other_size = (size as f64 - entry.size as f64).abs() > entry.size as f64 * SIZE_TOLERANCE;
    if !other_architecture && !other_size {
        return None;
    }
    let message = if other_architecture {
        format!(
            "This file is a {} model of {}, not the {} ({}, {}) the catalogue lists: the Hub, or \
             the mirror HF_ENDPOINT names, serves another file under its name. It runs as a {} \
             model; delete it if that is not the model you wanted",
            architecture.unwrap_or("?"),
            size_for_people(size),
            entry.name,
            entry.architecture,
            size_for_people(entry.size),
            architecture.unwrap_or("?"),
        )
    } else {
        format!(
            "This file is {}, not the {} the catalogue lists for {}: another build of the model \
             than the catalogue's (another quantisation, or a file changed upstream), so its \
             memory needs and tool-use check may differ",
            size_for_people(size),
            size_for_people(entry.size),
            entry.name,
        )
    };
    Some(CatalogMismatch {
        entry: entry.id.clone(),
        entry_name: entry.name.clone(),
        expected_architecture: entry.architecture.clone(),
        expected_size: entry.size,
        architecture: architecture.map(str::to_string),
        size,
        message,
    })
}

/// A size as the Models screen writes it: powers of 1000, one decimal (`806.1 MB`, `1.1 GB`).
fn size_for_people(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A catalogue entry by id (case-insensitive).
pub fn find(id: &str) -> Option<&'static CatalogEntry> {
    catalog()
        .iter()
        .find(|e| e.id.eq_ignore_ascii_case(id.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(memory_gib: u64, disk_gib: u64) -> Machine {
        Machine {
            total_memory: memory_gib << 30,
            available_memory: memory_gib << 30,
            free_disk: disk_gib << 30,
            cores: 4,
        }
    }

    #[test]
    fn the_catalogue_is_whole() {
        assert!(catalog().len() >= 8);
        for e in catalog() {
            assert!(e.repo.contains('/'), "{}", e.id);
            assert!(e.file.ends_with(".gguf"), "{}", e.id);
            // Its file name works on every system (the name a pull of it gets).
            assert_eq!(
                crate::library::download::local_name(&e.file)
                    .ok()
                    .as_deref(),
                Some(e.file.rsplit('/').next().unwrap_or(&e.file)),
                "{}",
                e.id
            );
            assert!(e.size > 100 << 20 && e.min_memory > e.size, "{}", e.id);
            assert!(e.context >= 8192, "{}", e.id);
            assert!(!e.license.is_empty(), "{}", e.id);
            assert!(
                !e.architecture.is_empty()
                    && e.architecture.chars().all(|c| c.is_ascii_alphanumeric()),
                "{}",
                e.id
            );
        }
        let ranks: std::collections::BTreeSet<u32> = catalog().iter().map(|e| e.rank).collect();
        assert_eq!(ranks.len(), catalog().len(), "ranks are distinct");
    }

    #[test]
    fn a_file_other_than_its_entry_says_what_it_is() {
        let gemma = find("gemma-3-1b").unwrap();
        // Its own file, or one changed by a few kilobytes (a template fixed upstream): no warning.
        assert_eq!(mismatch(gemma, gemma.size, Some("gemma3")), None);
        assert_eq!(mismatch(gemma, gemma.size + 40_000, Some("GEMMA3")), None);
        // Another architecture: what it is, and what the catalogue lists.
        let other = mismatch(gemma, 1_100_000_000, Some("llama")).unwrap();
        assert_eq!(other.architecture.as_deref(), Some("llama"));
        assert_eq!(
            (other.expected_size, other.size),
            (gemma.size, 1_100_000_000)
        );
        assert!(
            other.message.starts_with(&format!(
                "This file is a llama model of 1.1 GB, not the {} (gemma3, 806.1 MB) the catalogue lists",
                gemma.name
            )),
            "{}",
            other.message
        );
        // The same architecture, another size: another build.
        let bigger = mismatch(gemma, gemma.size * 2, Some("gemma3")).unwrap();
        assert!(
            bigger
                .message
                .starts_with("This file is 1.6 GB, not the 806.1 MB the catalogue lists"),
            "{}",
            bigger.message
        );
    }

    #[test]
    fn fit_follows_memory_and_disk() {
        let m = machine(16, 100);
        assert_eq!(fit(2 << 30, 4 << 30, &m).fit, Fit::Good);
        assert_eq!(fit(2 << 30, 12 << 30, &m).fit, Fit::Tight);
        assert_eq!(fit(2 << 30, 20 << 30, &m).fit, Fit::TooBig);
        assert_eq!(fit(200 << 30, 4 << 30, &m).fit, Fit::NoDisk);
        assert!(fit(200 << 30, 4 << 30, &m).reason.contains("disk"));
    }

    #[test]
    fn the_recommendation_fits_the_machine() {
        // Before any check: a big machine gets the first choice, a small one something smaller
        // that still fits, a tiny one nothing.
        let unchecked = |m: &Machine| recommend_by(m, |_| None).map(|r| r.entry);
        let big = unchecked(&machine(32, 500)).unwrap();
        assert_eq!(big.rank, 1);
        let small = unchecked(&machine(4, 500)).unwrap();
        assert!(
            small.min_memory as f64 <= (4u64 << 30) as f64 * 0.6,
            "{}",
            small.id
        );
        assert!(unchecked(&machine(1, 500)).is_none());
        // No disk: nothing.
        assert!(unchecked(&machine(32, 0)).is_none());
        assert!(recommend(&machine(32, 0)).is_none());
    }

    fn score(as_asked: u32) -> CheckScore {
        CheckScore {
            as_asked,
            items: 200,
            mode: "native".into(),
            guided: true,
            measured: String::new(),
        }
    }

    #[test]
    fn the_recommendation_is_the_best_checked_model_that_fits() {
        let m = machine(32, 500);
        let last = catalog().last().unwrap();
        let first = &catalog()[0];
        // One checked model: it wins over the unchecked first choice, and says why.
        let r = recommend_by(&m, |e| (e.id == last.id).then(|| score(120))).unwrap();
        assert_eq!(r.entry.id, last.id);
        assert!(
            r.reason.contains("60 % of 200 items as asked"),
            "{}",
            r.reason
        );
        assert!(r.reason.contains("on this computer"), "{}", r.reason);
        // Two: the better score wins; on a tie, the more preferred.
        let r = recommend_by(&m, |e| {
            (e.id == last.id)
                .then(|| score(120))
                .or_else(|| (e.id == first.id).then(|| score(150)))
        })
        .unwrap();
        assert_eq!(r.entry.id, first.id);
        let r = recommend_by(&m, |e| {
            (e.id == last.id || e.id == first.id).then(|| score(150))
        })
        .unwrap();
        assert_eq!(r.entry.id, first.id);
        // A checked model that does not fit comfortably loses to the ones that do.
        let small = machine(4, 500);
        let biggest = catalog().iter().max_by_key(|e| e.min_memory).unwrap();
        let r = recommend_by(&small, |e| (e.id == biggest.id).then(|| score(200))).unwrap();
        assert_ne!(r.entry.id, biggest.id);
        assert!(r.reason.contains("no model that fits"), "{}", r.reason);
    }

    #[test]
    fn published_checks_are_whole_and_recommend() {
        let published: Vec<_> = catalog()
            .iter()
            .filter_map(|e| e.published_check.as_ref().map(|c| (e, c)))
            .collect();
        assert!(!published.is_empty(), "the catalogue publishes a check");
        for (e, c) in &published {
            assert!(c.items > 0 && c.as_asked <= c.items, "{}", e.id);
            assert!(matches!(c.mode.as_str(), "text" | "native"), "{}", e.id);
            assert!(!c.measured.is_empty(), "{}: where it was measured", e.id);
        }
        let r = recommend_by(&machine(32, 500), |e| e.published_check.clone()).unwrap();
        assert!(r.entry.published_check.is_some(), "{}", r.entry.id);
        assert!(r
            .reason
            .contains(&r.entry.published_check.as_ref().unwrap().measured));
    }
}
