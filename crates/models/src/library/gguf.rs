//! What a GGUF file says about itself, read from its header without loading the model.
//!
//! A GGUF file starts with the magic `GGUF`, a version (2 or 3 today), the tensor and metadata
//! counts, then the metadata as key/value pairs (strings, numbers, booleans and arrays of them).
//! Only the few keys the library shows are kept; the rest (the tokenizer's large arrays among
//! them) are skipped by seeking. Every length is checked against what is left of the file, so a
//! truncated, corrupt or foreign file gets an error naming the byte where reading stopped and
//! never a large allocation or a panic.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What the header of a GGUF file says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct GgufInfo {
    /// The format version (2 or 3).
    pub version: u32,
    /// `general.architecture` (`llama`, `qwen3`, `gemma3`, …).
    pub architecture: Option<String>,
    /// `general.name`.
    pub name: Option<String>,
    /// `general.size_label` (`135M`, `1.7B`, …).
    pub size_label: Option<String>,
    /// The quantisation, from `general.file_type` (`Q4_K_M`, `Q8_0`, `F16`, …).
    pub quantization: Option<String>,
    /// The context the model was trained for: `{architecture}.context_length`.
    #[cfg_attr(feature = "specta", specta(type = Option<f64>))]
    pub context_length: Option<u64>,
    /// Whether the file carries a chat template (`tokenizer.chat_template`).
    pub has_chat_template: bool,
    /// `general.license`.
    pub license: Option<String>,
    /// How many tensors the file holds.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub tensor_count: u64,
}

/// Why a file could not be read as a GGUF model.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The file is not a GGUF model file.
    #[error("{path} is not a GGUF model file: {reason}")]
    NotGguf {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// The header is cut short or inconsistent.
    #[error("{path} is damaged: {reason} at byte {offset} of {size} (a download that did not finish, or a corrupt file)")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Where reading stopped.
        offset: u64,
        /// The file's size.
        size: u64,
        /// What was being read.
        reason: String,
    },
}

/// The quantisation name llama.cpp gives `general.file_type`.
pub fn file_type_name(file_type: u32) -> Option<&'static str> {
    Some(match file_type {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        19 => "IQ2_XXS",
        20 => "IQ2_XS",
        21 => "Q2_K_S",
        22 => "IQ3_XS",
        23 => "IQ3_XXS",
        24 => "IQ1_S",
        25 => "IQ4_NL",
        26 => "IQ3_S",
        27 => "IQ3_M",
        28 => "IQ2_S",
        29 => "IQ2_M",
        30 => "IQ4_XS",
        31 => "IQ1_M",
        32 => "BF16",
        36 => "TQ1_0",
        37 => "TQ2_0",
        38 => "MXFP4_MOE",
        _ => return None,
    })
}

/// The quantisation a GGUF file name states (`…-Q4_K_M.gguf`, `….q8_0.gguf`), upper-cased.
pub fn quantization_from_name(file: &str) -> Option<String> {
    let stem = file
        .strip_suffix(".gguf")
        .unwrap_or(file)
        .to_ascii_uppercase();
    let known = [
        "IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS", "IQ3_S",
        "IQ3_M", "IQ4_NL", "IQ4_XS", "Q2_K_S", "Q2_K_L", "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L",
        "Q3_K_XL", "Q4_K_S", "Q4_K_M", "Q4_K_L", "Q4_K_XL", "Q4_0", "Q4_1", "Q5_K_S", "Q5_K_M",
        "Q5_K_L", "Q5_0", "Q5_1", "Q6_K_L", "Q6_K", "Q8_0", "BF16", "F16", "F32", "MXFP4",
    ];
    let parts: Vec<&str> = stem.split(['-', '.']).collect();
    // The longest known name that a dash- or dot-separated tail of the stem spells.
    for start in (0..parts.len()).rev() {
        let tail = parts[start..].join("-");
        let tail_u = tail.replace('-', "_");
        if let Some(q) = known.iter().find(|q| **q == tail_u || **q == tail) {
            return Some((*q).to_string());
        }
    }
    parts
        .iter()
        .rev()
        .find_map(|p| known.iter().find(|q| **q == *p).map(|q| (*q).to_string()))
}

/// Read the header of the GGUF file at `path`.
pub fn read(path: &Path) -> Result<GgufInfo, GgufError> {
    read_with(path, false).map(|(info, _)| info)
}

/// Read the header of the GGUF file at `path`, and its chat template's text (up to 1 MB; a
/// longer one is reported as none).
pub fn read_with_template(path: &Path) -> Result<(GgufInfo, Option<String>), GgufError> {
    read_with(path, true)
}

fn read_with(path: &Path, want_template: bool) -> Result<(GgufInfo, Option<String>), GgufError> {
    let io_err = |source| GgufError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let size = file.metadata().map_err(io_err)?.len();
    let mut r = Reader {
        inner: BufReader::with_capacity(64 * 1024, file),
        offset: 0,
        size,
        path,
        want_template,
        template: None,
    };
    let info = r.header()?;
    Ok((info, r.template))
}

// GGUF value types.
const T_U8: u32 = 0;
const T_I8: u32 = 1;
const T_U16: u32 = 2;
const T_I16: u32 = 3;
const T_U32: u32 = 4;
const T_I32: u32 = 5;
const T_F32: u32 = 6;
const T_BOOL: u32 = 7;
const T_STRING: u32 = 8;
const T_ARRAY: u32 = 9;
const T_U64: u32 = 10;
const T_I64: u32 = 11;
const T_F64: u32 = 12;

/// The longest string value kept (a chat template is a few KiB; names are short).
const MAX_KEPT_STRING: u64 = 1 << 20;

/// A value the library keeps.
enum Value {
    Int(u64),
    Text(String),
    Other,
}

struct Reader<'a> {
    inner: BufReader<File>,
    offset: u64,
    size: u64,
    path: &'a Path,
    /// Keep the chat template's text (up to 1 MB) in `template`.
    want_template: bool,
    template: Option<String>,
}

impl Reader<'_> {
    fn damaged(&self, reason: impl Into<String>) -> GgufError {
        GgufError::Damaged {
            path: self.path.to_path_buf(),
            offset: self.offset,
            size: self.size,
            reason: reason.into(),
        }
    }

    fn left(&self) -> u64 {
        self.size.saturating_sub(self.offset)
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        if self.left() < N as u64 {
            return Err(self.damaged(format!("the file ends while reading {what}")));
        }
        let mut buf = [0u8; N];
        self.inner.read_exact(&mut buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                self.damaged(format!("the file ends while reading {what}"))
            } else {
                GgufError::Io {
                    path: self.path.to_path_buf(),
                    source: e,
                }
            }
        })?;
        self.offset += N as u64;
        Ok(buf)
    }

    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.bytes::<4>(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.bytes::<8>(what)?))
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<(), GgufError> {
        if n > self.left() {
            return Err(self.damaged(format!(
                "{what} claims {n} bytes but only {} are left",
                self.left()
            )));
        }
        let step = i64::try_from(n).map_err(|_| self.damaged(format!("{what} is too long")))?;
        self.inner
            .seek_relative(step)
            .map_err(|source| GgufError::Io {
                path: self.path.to_path_buf(),
                source,
            })?;
        self.offset += n;
        Ok(())
    }

    /// A string: its length, then its bytes. Kept when `keep` and not too long, else skipped.
    fn string(&mut self, what: &str, keep: bool) -> Result<Option<String>, GgufError> {
        let len = self.u64(what)?;
        if len > self.left() {
            return Err(self.damaged(format!(
                "{what} claims {len} bytes but only {} are left",
                self.left()
            )));
        }
        if !keep || len > MAX_KEPT_STRING {
            self.skip(len, what)?;
            return Ok(None);
        }
        let mut buf = vec![0u8; len as usize];
        self.inner
            .read_exact(&mut buf)
            .map_err(|_| self.damaged(format!("the file ends while reading {what}")))?;
        self.offset += len;
        Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
    }

    fn fixed_size(kind: u32) -> Option<u64> {
        match kind {
            T_U8 | T_I8 | T_BOOL => Some(1),
            T_U16 | T_I16 => Some(2),
            T_U32 | T_I32 | T_F32 => Some(4),
            T_U64 | T_I64 | T_F64 => Some(8),
            _ => None,
        }
    }

    fn value(&mut self, kind: u32, key: &str, keep: bool) -> Result<Value, GgufError> {
        let what = format!("the value of {key}");
        match kind {
            T_U8 => Ok(Value::Int(self.bytes::<1>(&what)?[0] as u64)),
            T_U16 => Ok(Value::Int(
                u16::from_le_bytes(self.bytes::<2>(&what)?) as u64
            )),
            T_U32 => Ok(Value::Int(self.u32(&what)? as u64)),
            T_I32 => Ok(Value::Int(
                i32::from_le_bytes(self.bytes::<4>(&what)?).max(0) as u64,
            )),
            T_U64 => Ok(Value::Int(self.u64(&what)?)),
            T_I64 => Ok(Value::Int(
                i64::from_le_bytes(self.bytes::<8>(&what)?).max(0) as u64,
            )),
            T_STRING => Ok(self.string(&what, keep)?.map_or(Value::Other, Value::Text)),
            T_ARRAY => {
                let inner = self.u32(&what)?;
                let count = self.u64(&what)?;
                if let Some(each) = Self::fixed_size(inner) {
                    let bytes = count.checked_mul(each).ok_or_else(|| {
                        self.damaged(format!("{what} is an impossibly long array"))
                    })?;
                    self.skip(bytes, &what)?;
                } else if inner == T_STRING {
                    // Each string is at least its 8-byte length.
                    if count > self.left() / 8 {
                        return Err(self.damaged(format!(
                            "{what} claims {count} strings, more than the file can hold"
                        )));
                    }
                    for _ in 0..count {
                        self.string(&what, false)?;
                    }
                } else {
                    return Err(
                        self.damaged(format!("{what} is an array of an unknown type ({inner})"))
                    );
                }
                Ok(Value::Other)
            }
            other => match Self::fixed_size(other) {
                Some(n) => {
                    self.skip(n, &what)?;
                    Ok(Value::Other)
                }
                None => Err(self.damaged(format!("{what} has an unknown type ({other})"))),
            },
        }
    }

    fn header(&mut self) -> Result<GgufInfo, GgufError> {
        if self.size < 4 {
            return Err(GgufError::NotGguf {
                path: self.path.to_path_buf(),
                reason: format!("it is only {} bytes long", self.size),
            });
        }
        let magic = self.bytes::<4>("the magic number")?;
        if &magic != b"GGUF" {
            let shown: String = magic
                .iter()
                .map(|b| {
                    if b.is_ascii_graphic() {
                        (*b as char).to_string()
                    } else {
                        format!("\\x{b:02x}")
                    }
                })
                .collect();
            let hint = if magic.starts_with(b"<") {
                " (it looks like a web page: the download got an error page instead of the model)"
            } else {
                ""
            };
            return Err(GgufError::NotGguf {
                path: self.path.to_path_buf(),
                reason: format!("it starts with \"{shown}\", not \"GGUF\"{hint}"),
            });
        }
        let version = self.u32("the format version")?;
        if !(2..=3).contains(&version) {
            return Err(GgufError::NotGguf {
                path: self.path.to_path_buf(),
                reason: format!("GGUF version {version} is not supported (2 and 3 are)"),
            });
        }
        let tensor_count = self.u64("the tensor count")?;
        let kv_count = self.u64("the metadata count")?;
        // A key is at least its 8-byte length and a 4-byte type.
        if kv_count > self.left() / 12 {
            return Err(self.damaged(format!(
                "the header claims {kv_count} metadata entries, more than the file can hold"
            )));
        }
        let mut info = GgufInfo {
            version,
            tensor_count,
            ..GgufInfo::default()
        };
        let mut file_type = None;
        let mut alignment = 32u64;
        let mut contexts: Vec<(String, u64)> = Vec::new();
        for _ in 0..kv_count {
            let key = self
                .string("a metadata key", true)?
                .ok_or_else(|| self.damaged("a metadata key is too long"))?;
            let kind = self.u32("a metadata type")?;
            let keep = matches!(
                key.as_str(),
                "general.architecture"
                    | "general.name"
                    | "general.size_label"
                    | "general.license"
                    | "general.file_type"
                    | "general.alignment"
            ) || key.ends_with(".context_length");
            let is_template = key == "tokenizer.chat_template";
            if is_template {
                info.has_chat_template = true;
            }
            let value = self.value(kind, &key, keep || (is_template && self.want_template))?;
            match (key.as_str(), value) {
                ("general.architecture", Value::Text(s)) => info.architecture = Some(s),
                ("general.name", Value::Text(s)) => info.name = Some(s),
                ("general.size_label", Value::Text(s)) => info.size_label = Some(s),
                ("general.license", Value::Text(s)) => info.license = Some(s),
                ("general.file_type", Value::Int(n)) => file_type = Some(n),
                ("general.alignment", Value::Int(n)) if n.is_power_of_two() => alignment = n,
                ("tokenizer.chat_template", Value::Text(s)) => self.template = Some(s),
                (k, Value::Int(n)) if k.ends_with(".context_length") => {
                    contexts.push((k.trim_end_matches(".context_length").to_string(), n));
                }
                _ => {}
            }
        }
        info.quantization = file_type
            .and_then(|n| u32::try_from(n).ok())
            .and_then(file_type_name)
            .map(str::to_string);
        info.context_length = contexts
            .iter()
            .find(|(arch, _)| Some(arch) == info.architecture.as_ref())
            .or_else(|| contexts.first())
            .map(|(_, n)| *n);
        self.tensors(tensor_count, alignment)?;
        Ok(info)
    }

    /// Walk the tensor table (name, dimensions, type, offset of each) and check the file is
    /// long enough for the tensors it lists: a file cut after its header is caught here.
    fn tensors(&mut self, count: u64, alignment: u64) -> Result<(), GgufError> {
        // Each entry is at least a name length, a dimension count, a type and an offset.
        if count > self.left() / 24 {
            return Err(self.damaged(format!(
                "the header claims {count} tensors, more than the file can hold"
            )));
        }
        let mut end = 0u64;
        for i in 0..count {
            self.string(&format!("the name of tensor {i}"), false)?;
            let dims = self.u32(&format!("the dimensions of tensor {i}"))?;
            if dims > 8 {
                return Err(self.damaged(format!("tensor {i} claims {dims} dimensions")));
            }
            let mut elements = 1u64;
            for _ in 0..dims {
                elements = elements.saturating_mul(self.u64(&format!("the shape of tensor {i}"))?);
            }
            let kind = self.u32(&format!("the type of tensor {i}"))?;
            let offset = self.u64(&format!("the offset of tensor {i}"))?;
            let least = elements.saturating_mul(tensor_bits(kind)) / 8;
            end = end.max(offset.saturating_add(least));
        }
        let data_start = self.offset.div_ceil(alignment) * alignment;
        let needed = data_start.saturating_add(end);
        if self.size < needed {
            self.offset = self.size;
            return Err(self.damaged(format!(
                "its tensors need at least {needed} bytes and the file ends"
            )));
        }
        Ok(())
    }
}

/// Bits per element of a tensor type, rounded down to what its blocks take at the least (so the
/// size check never rejects a whole file).
fn tensor_bits(kind: u32) -> u64 {
    match kind {
        0 => 32,            // F32
        1 | 30 => 16,       // F16, BF16
        8 => 8,             // Q8_0 (8.5)
        2 | 3 | 6 | 7 => 4, // Q4_0, Q4_1, Q5_0, Q5_1 (4.5-6)
        12..=15 => 4,       // Q4_K, Q5_K, Q6_K, Q8_K
        24 => 8,            // I8
        25 => 16,           // I16
        26 => 32,           // I32
        27 => 64,           // I64
        28 => 64,           // F64
        _ => 1,
    }
}
