//! The thread that owns llama.cpp: it loads the model, keeps one context, and runs the jobs the
//! server hands it one after another.
//!
//! Between jobs the context's KV cache holds the tokens of the last prompt and answer; a new
//! prompt reuses the longest prefix it shares with them and only the rest is processed (an
//! agent re-sends its system prompt, tools and history every round). Text goes back through
//! the job's channel as it is generated; when the receiver is gone (the client went away) the
//! job stops at the next token, or between prompt batches.
//!
//! Each token becomes text as llama.cpp renders it without its special tokens: a control token
//! (`<|im_end|>`, `<|eot_id|>`…) is nothing. Except the call markers: several families write
//! theirs as control tokens (Llama 3's `<|python_tag|>`, Mistral's `[TOOL_CALLS]`, LFM2's
//! `<|tool_call_start|>`…), so the tokens that are exactly one of
//! [`CALL_MARKERS`](artifactflow_parser::family::CALL_MARKERS) (found once, when the model is
//! loaded) are rendered with their text, where the triggers and the engine's reader look for them.
//!
//! An answer ends at an end-of-generation token of the model file (llama.cpp's set: its `eos`,
//! `eot`, `eom` and the tokens it knows by their text, `<|im_end|>`, `<end_of_turn>`…), at an
//! end marker of the chat format in use (see `formats`), whether the model writes it as its token
//! or as plain text (the text before it is the answer; see `ending`), when it has written one
//! span of tokens again and again (`ending::Repeats`), or at its limits.

use std::collections::HashSet;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::mpsc;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc as tmpsc;

use crate::chat::Message;
use crate::{ending, formats, guide, template};

/// Tokens decoded per batch while reading a prompt (the client is checked between batches).
const BATCH: usize = 512;
/// The smallest context the runtime runs with.
const MIN_CTX: u32 = 512;

/// How to load the model.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The GGUF file.
    pub model: PathBuf,
    /// A Jinja chat template that replaces the model file's (`--chat-template`).
    pub chat_template: Option<String>,
    /// Context size asked for (at most the model's trained context).
    pub ctx: Option<u32>,
    /// Threads generating the answer; default: the machine's cores (a prompt is read with all
    /// of them).
    pub threads: Option<u32>,
}

/// What the loaded model is.
#[derive(Debug, Clone)]
pub struct Info {
    /// The file's name without `.gguf`, the model's id on the wire.
    pub name: String,
    /// The context the runtime runs with.
    pub n_ctx: u32,
    /// The context the model was trained with.
    pub n_ctx_train: u32,
    /// A note when the chat template in use is not the model file's (it has none, or llama.cpp
    /// cannot render it: its architecture's or ChatML is used, see `formats`), or the file's
    /// was refused for tools.
    pub template_note: Option<String>,
    /// Which chat template renders the turns, where it came from and the texts that end an
    /// answer ([`formats::Choice::to_json`]), for the ready line.
    pub chat_template: serde_json::Value,
    /// A note when the context is smaller than asked because the memory free for it is short.
    pub memory_note: Option<String>,
    /// Native calls' tools go through the chat template (it takes tools, see `template`).
    pub tools_in_template: bool,
}

/// The context to run with: the smallest of the model's trained context, the one asked for
/// (the profile's `context_window`) and what fits in half of the memory free now (the KV cache
/// takes `kv_per_token` bytes per token; the other half stays for the computation and the rest of
/// the system). A multiple of 256 and never under [`MIN_CTX`]. With a note when memory is what
/// limited it.
pub fn context_for(
    n_ctx_train: u32,
    asked: Option<u32>,
    kv_per_token: u64,
    available: u64,
) -> (u32, Option<String>) {
    let wanted = asked
        .map_or(n_ctx_train, |a| a.min(n_ctx_train))
        .max(MIN_CTX);
    if kv_per_token == 0 || available == 0 {
        return (wanted, None);
    }
    let budget = available.saturating_sub(512 << 20) / 2;
    let fits = u32::try_from(budget / kv_per_token).unwrap_or(u32::MAX) / 256 * 256;
    if fits >= wanted {
        return (wanted, None);
    }
    let n_ctx = fits.max(MIN_CTX);
    (
        n_ctx,
        Some(format!(
            "the context is {n_ctx} tokens instead of {wanted}: that is what fits in the memory free now ({} MB); close other programs for more",
            available / 1_000_000
        )),
    )
}

/// One request: the chat so far and how to answer it.
#[derive(Debug)]
pub struct Job {
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// The tools offered for native calls (OpenAI's `tools` entries).
    pub tools: Vec<serde_json::Value>,
    /// Most tokens to generate (default: until the context is full).
    pub max_tokens: Option<u32>,
    /// Sampling temperature; 0 or less samples greedily.
    pub temperature: f32,
    /// The sampler's seed.
    pub seed: u32,
    /// A grammar the answer must follow, if any.
    pub grammar: Option<Grammar>,
    /// How long the job may run once the model thread takes it up (reading the prompt and
    /// answering); past it the answer ends as if it had reached its token limit.
    pub time_limit: std::time::Duration,
    /// Where the answer goes.
    pub events: tmpsc::Sender<Event>,
}

/// A GBNF grammar for the answer (llama.cpp's format, rule `root`).
#[derive(Debug, Clone, PartialEq)]
pub struct Grammar {
    /// The rules.
    pub text: String,
    /// Regular expressions that turn the grammar on once the answer so far matches one (it
    /// then applies from where the match starts); empty: it applies from the first token. Read
    /// by the runtime itself (see `guide`), never by llama.cpp.
    pub triggers: Vec<String>,
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The model ended its answer: an end-of-generation token, or an end marker of the chat
    /// format (as its token or as text).
    Stop,
    /// `max_tokens`, the context is full, or the job's time limit has passed.
    Length,
    /// The answer was writing one span of tokens again and again (see `ending::Repeats`).
    Repeated(ending::Repeat),
}

/// What a job sends back.
#[derive(Debug)]
pub enum Event {
    /// More of the answer.
    Text(String),
    /// The answer is complete.
    Done {
        /// Why it stopped.
        finish: Finish,
        /// Tokens in the prompt.
        prompt_tokens: u32,
        /// Of those, how many were already in the cache.
        cached_tokens: u32,
        /// Tokens generated.
        completion_tokens: u32,
        /// The answer's end was written under the job's grammar: from the start (a grammar with
        /// no trigger), or from where a trigger matched.
        guided: bool,
    },
    /// The job failed (before or during generation).
    Error(JobError),
}

/// Why a job failed.
#[derive(Debug, Clone, PartialEq)]
pub struct JobError {
    /// What went wrong, for the client.
    pub message: String,
    /// The request asked for something that cannot be done (a 400), not a failure of the
    /// runtime (a 500).
    pub by_request: bool,
}

/// Load the model on a thread of its own; returns the job queue and what was loaded, or why
/// the model could not be loaded.
pub fn start(settings: Settings) -> Result<(mpsc::Sender<Job>, Info), String> {
    let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
    let (info_tx, info_rx) = mpsc::channel::<Result<Info, String>>();
    std::thread::Builder::new()
        .name("llama".into())
        .spawn(move || run(settings, jobs_rx, info_tx))
        .map_err(|e| format!("cannot start the model thread: {e}"))?;
    let info = info_rx
        .recv()
        .map_err(|_| "the runtime stopped while loading the model".to_string())??;
    Ok((jobs_tx, info))
}

fn run(settings: Settings, jobs: mpsc::Receiver<Job>, info_tx: mpsc::Sender<Result<Info, String>>) {
    let fail = |message: String| {
        let _ = info_tx.send(Err(message));
    };
    let mut backend = match LlamaBackend::init() {
        Ok(backend) => backend,
        Err(e) => return fail(format!("llama.cpp did not start: {e}")),
    };
    if std::env::var_os("ARTIFACTFLOW_RUNTIME_LOG").is_none() {
        backend.void_logs();
    }
    let path = &settings.model;
    if !path.is_file() {
        return fail(format!("{} is not a file", path.display()));
    }
    let model = match LlamaModel::load_from_file(&backend, path, &LlamaModelParams::default()) {
        Ok(model) => model,
        Err(e) => {
            return fail(format!(
                "{} is not a model llama.cpp can load ({e}); is it a complete GGUF file?",
                path.display()
            ))
        }
    };
    let n_ctx_train = model.n_ctx_train().max(MIN_CTX);
    // The KV cache (keys and values, F16) grows by this much per token of context.
    let head_dim = u64::try_from(model.n_embd()).unwrap_or(0) / u64::from(model.n_head().max(1));
    let kv_per_token = 2 * u64::from(model.n_layer()) * head_dim * u64::from(model.n_head_kv()) * 2;
    let mut sys = sysinfo::System::new();
    sys.refresh_memory();
    let (n_ctx, memory_note) = context_for(
        n_ctx_train,
        settings.ctx,
        kv_per_token,
        sys.available_memory(),
    );
    // Generating one token at a time is bound by memory: `--threads` (default the physical
    // cores).
    // Reading a prompt is compute-bound and always uses every core, as llama.cpp's server and
    // llama-cpp-python do by default.
    let threads =
        i32::try_from(settings.threads.unwrap_or_else(physical_cores).max(1)).unwrap_or(1);
    let batch_threads = i32::try_from(all_cores()).unwrap_or(1).max(threads);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(BATCH as u32)
        .with_n_threads(threads)
        .with_n_threads_batch(batch_threads);
    let ctx = match model.new_context(&backend, params.clone()) {
        Ok(ctx) => ctx,
        Err(e) => {
            return fail(format!(
                "cannot make a {n_ctx}-token context for {} ({e}); try a smaller context_window",
                path.display()
            ))
        }
    };
    // The template that renders the turns (see `formats`): the one given, else the file's,
    // when llama.cpp's engine renders it; else the known one of the file's architecture; else
    // ChatML.
    let has_token = |text: &str| single_token(&model, text).is_some();
    let file_template = model
        .chat_template(None)
        .ok()
        .and_then(|t| t.to_str().ok().map(str::to_string));
    let jinja = match (settings.chat_template.as_deref(), file_template.as_deref()) {
        (Some(text), _) => Some((text, formats::Source::Given)),
        (None, Some(text)) => Some((text, formats::Source::ModelFile)),
        (None, None) => None,
    }
    .map(|(text, source)| formats::Jinja {
        text,
        source,
        renders: renders(&model, text),
    });
    let architecture = model.meta_val_str("general.architecture").ok();
    let choice = formats::choose(jinja, architecture.as_deref(), has_token);
    let template = match LlamaChatTemplate::new(&choice.template) {
        Ok(template) => template,
        Err(_) => return fail("the chat template holds a NUL character".to_string()),
    };
    let mut template_note = choice.note.clone();
    // The Jinja text, for native calls (see `template`), when it takes tools and stays within
    // the bounds in a process of its own (see `probe`).
    let tools_in_template = match jinja.map(|j| j.text).filter(|s| template::takes_tools(s)) {
        None => false,
        Some(text) => match crate::probe::check(text) {
            Ok(()) => true,
            Err(why) => {
                template_note = Some(format!(
                    "the model file's chat template was refused ({why}); the tools go in the system message"
                ));
                false
            }
        },
    };
    let source = jinja
        .map(|j| j.text.to_string())
        .filter(|_| tools_in_template);
    // The end markers that are one token of this vocabulary end an answer as that token; the
    // call markers (rendered with their text) are never among them.
    let markers = marker_tokens(&model);
    let stops = choice.stops();
    let stop_tokens = stops
        .iter()
        .filter_map(|stop| single_token(&model, stop))
        .filter(|token| !markers.contains(token))
        .collect();
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let info = Info {
        name,
        n_ctx: ctx.n_ctx(),
        n_ctx_train,
        template_note,
        memory_note,
        tools_in_template,
        chat_template: choice.to_json(),
    };
    if info_tx.send(Ok(info)).is_err() {
        return;
    }
    let mut state = State {
        model: &model,
        markers,
        stops: stops.iter().map(|s| s.to_string()).collect(),
        stop_tokens,
        template,
        source,
        cached: Vec::new(),
        bytes: None,
    };
    // The context (and its KV cache, the prefix kept between requests) is dropped when the
    // machine runs short of memory between requests, which gives that memory back; the next
    // request makes a new one and reads its whole prompt.
    let pressure = Pressure::from_env();
    let mut ctx = Some(ctx);
    loop {
        let job = match jobs.recv_timeout(pressure.every) {
            Ok(job) => job,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if ctx.is_some() && pressure.now() {
                    ctx = None;
                    state.cached.clear();
                    eprintln!("memory is short: the context and its cache were freed");
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let events = job.events.clone();
        if ctx.is_none() {
            match model.new_context(&backend, params.clone()) {
                Ok(made) => ctx = Some(made),
                Err(e) => {
                    let _ = events.blocking_send(Event::Error(JobError {
                        message: format!(
                            "cannot make a {n_ctx}-token context again ({e}): memory is short; close other programs or lower context_window"
                        ),
                        by_request: false,
                    }));
                    continue;
                }
            }
        }
        let Some(current) = ctx.as_mut() else {
            continue;
        };
        let outcome = state.answer(current, job);
        let _ = match outcome {
            Ok(done) => events.blocking_send(done),
            Err(Failure::Gone) => Ok(()),
            Err(Failure::Message(message)) => events.blocking_send(Event::Error(JobError {
                message,
                by_request: false,
            })),
            Err(Failure::Request(message)) => events.blocking_send(Event::Error(JobError {
                message,
                by_request: true,
            })),
        };
    }
}

/// When the machine is short of memory: less free than `ARTIFACTFLOW_RUNTIME_MIN_FREE_MB`
/// (default: 512 MB or 5 % of the memory, whichever is more), checked every
/// `ARTIFACTFLOW_RUNTIME_PRESSURE_MS` (default 2 s) while no request runs.
struct Pressure {
    min_free: Option<u64>,
    every: std::time::Duration,
}

impl Pressure {
    fn from_env() -> Pressure {
        let number = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Pressure {
            min_free: number("ARTIFACTFLOW_RUNTIME_MIN_FREE_MB").map(|mb| mb * 1_000_000),
            every: std::time::Duration::from_millis(
                number("ARTIFACTFLOW_RUNTIME_PRESSURE_MS")
                    .unwrap_or(2000)
                    .max(10),
            ),
        }
    }

    fn now(&self) -> bool {
        let mut sys = sysinfo::System::new();
        sys.refresh_memory();
        let min_free = self
            .min_free
            .unwrap_or_else(|| (512 << 20u64).max(sys.total_memory() / 20));
        let available = sys.available_memory();
        available > 0 && available < min_free
    }
}

/// Every core the process may use (reading a prompt).
fn all_cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(1))
}

/// The physical cores (generating: two hyper-threads of one core share its memory bandwidth
/// and only wait on each other), else every core.
fn physical_cores() -> u32 {
    sysinfo::System::physical_core_count()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
        .map_or_else(all_cores, |n| n.min(all_cores()))
}

/// The model's tokens whose text is exactly one of the families' call markers
/// ([`CALL_MARKERS`](artifactflow_parser::family::CALL_MARKERS)): each marker is tokenized as
/// the prompt is (special tokens recognised), and a marker that comes out as one token is one.
/// A model without a marker in its vocabulary spells it in several ordinary tokens, which are
/// rendered as they are anyway.
fn marker_tokens(model: &LlamaModel) -> HashSet<LlamaToken> {
    artifactflow_parser::family::CALL_MARKERS
        .iter()
        .filter_map(|marker| single_token(model, marker))
        .collect()
}

/// The token whose text is exactly `text`, when the vocabulary has one: `text` tokenized as a
/// prompt is (special tokens recognised) comes out as one token.
fn single_token(model: &LlamaModel, text: &str) -> Option<LlamaToken> {
    match model.vocab().tokenize(text.as_bytes(), false, true)[..] {
        [token] => Some(token),
        _ => None,
    }
}

/// Whether llama.cpp's template engine renders `template` (it knows its format: a template it
/// does not know fails every request).
fn renders(model: &LlamaModel, template: &str) -> bool {
    let Ok(template) = LlamaChatTemplate::new(template) else {
        return false;
    };
    let Ok(probe) = LlamaChatMessage::new("user".into(), "Hello".into()) else {
        return false;
    };
    model.apply_chat_template(&template, &[probe], true).is_ok()
}

enum Failure {
    /// The client went away: nothing to tell.
    Gone,
    /// Why the job failed, for the client.
    Message(String),
    /// What in the request cannot be done, for the client.
    Request(String),
}

/// The model, its template and what the context's KV cache holds.
struct State<'m> {
    model: &'m LlamaModel,
    /// The model's tokens that are exactly a call marker (see [`marker_tokens`]): rendered with
    /// their text even when they are control tokens.
    markers: HashSet<LlamaToken>,
    /// The texts that end an answer (the end markers of the chat format, see `formats`), even
    /// when written as ordinary tokens.
    stops: Vec<String>,
    /// The tokens that are exactly one of `stops`: they end an answer too (`<start_of_turn>` is
    /// a control token of Gemma's that llama.cpp does not count as an end of generation).
    stop_tokens: HashSet<LlamaToken>,
    /// What renders the turns (see `formats::choose`).
    template: LlamaChatTemplate,
    /// The template's text, when it renders tools itself (it takes them, and passed its check).
    source: Option<String>,
    /// The tokens whose keys and values are in the cache, in order from position 0.
    cached: Vec<LlamaToken>,
    /// For each byte, a token whose text is exactly that byte (made when first needed): how the
    /// text a trigger matched is spelled out to the grammar.
    bytes: Option<Vec<Option<LlamaToken>>>,
}

impl State<'_> {
    fn prompt(&self, messages: &[Message], tools: &[serde_json::Value]) -> Result<String, Failure> {
        // Tools offered: through the model's own template when it takes them.
        if !tools.is_empty() {
            // `source` is kept only for a template that takes tools and passed its check.
            if let Some(source) = self.source.as_deref() {
                match template::render(source, messages, tools) {
                    Ok(prompt) => return Ok(prompt),
                    Err(e) => eprintln!("{e}; the tools go in the system message instead"),
                }
            }
        }
        let messages = template::in_text(messages, tools);
        let chat = messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.clone(), m.content.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Failure::Message(format!("a message cannot be sent to the model: {e}")))?;
        // The template was tried when the model was loaded (see `renders`).
        self.model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| Failure::Message(format!("the chat template failed: {e}")))
    }

    fn answer(&mut self, ctx: &mut LlamaContext<'_>, job: Job) -> Result<Event, Failure> {
        let started = std::time::Instant::now();
        let text = self.prompt(&job.messages, &job.tools)?;
        // A grammar llama.cpp cannot read, or a trigger the runtime cannot, fails the request
        // before any work. llama.cpp gets the grammar alone; the triggers are ours.
        let mut guide = match &job.grammar {
            None => None,
            Some(g) => Some(Guide {
                triggers: guide::Triggers::new(&g.triggers).map_err(Failure::Request)?,
                grammar: LlamaSampler::grammar(self.model, &g.text, "root")
                    .map_err(|e| Failure::Request(format!("the grammar cannot be used: {e}")))?,
                on: g.triggers.is_empty(),
                written: String::new(),
            }),
        };
        let vocab = self.model.vocab();
        let prompt = vocab.tokenize(text.as_bytes(), true, true);
        let n_ctx = ctx.n_ctx() as usize;
        if prompt.is_empty() {
            return Err(Failure::Message("the prompt is empty".into()));
        }
        if prompt.len() >= n_ctx {
            return Err(Failure::Request(format!(
                "the conversation ({} tokens) does not fit the model's context ({n_ctx} tokens)",
                prompt.len()
            )));
        }
        // Keep the longest shared prefix; at least the last prompt token is decoded again, for
        // its logits.
        let mut reuse = self
            .cached
            .iter()
            .zip(&prompt)
            .take_while(|(a, b)| a == b)
            .count();
        reuse = reuse.min(prompt.len() - 1);
        let dropped = ctx
            .clear_kv_cache_seq(Some(0), Some(reuse as u32), None)
            .unwrap_or(false);
        if !dropped {
            ctx.clear_kv_cache();
            reuse = 0;
        }
        self.cached.truncate(reuse);

        let mut batch = LlamaBatch::new(BATCH, 1);
        let rest = &prompt[reuse..];
        for (c, chunk) in rest.chunks(BATCH).enumerate() {
            if job.events.is_closed() {
                return Err(Failure::Gone);
            }
            if started.elapsed() >= job.time_limit {
                return Err(Failure::Request(format!(
                    "reading the prompt took longer than this runtime's limit of {} s a request",
                    job.time_limit.as_secs()
                )));
            }
            batch.clear();
            let last_chunk = (c + 1) * BATCH >= rest.len();
            for (i, token) in chunk.iter().enumerate() {
                let pos = (reuse + c * BATCH + i) as i32;
                let logits = last_chunk && i + 1 == chunk.len();
                batch
                    .add(*token, pos, &[0], logits)
                    .map_err(|e| Failure::Message(format!("the prompt batch failed: {e}")))?;
            }
            if let Err(e) = ctx.decode(&mut batch) {
                self.cached.clear();
                ctx.clear_kv_cache();
                return Err(Failure::Message(format!("reading the prompt failed: {e}")));
            }
            self.cached.extend_from_slice(chunk);
        }

        let mut sampler = if job.temperature <= 0.0 {
            LlamaSampler::greedy()
        } else {
            LlamaSampler::chain_simple([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::min_p(0.05, 1),
                LlamaSampler::temp(job.temperature),
                LlamaSampler::dist(job.seed),
            ])
        };
        // At most what the context has room for, whatever the request asked.
        let room = n_ctx - prompt.len();
        let limit = job.max_tokens.map_or(room, |m| (m as usize).min(room));
        let mut produced = 0usize;
        let mut pending: Vec<u8> = Vec::new();
        // The end markers written as text (see `ending`), and loops.
        let mut stops = ending::StopTexts::new(&self.stops);
        let mut repeats = ending::Repeats::default();
        let finish = loop {
            let active = guide.as_mut().filter(|g| g.on).map(|g| &mut g.grammar);
            let token = pick(ctx, batch.n_tokens() - 1, &mut sampler, active)?;
            if vocab.is_eog(token) || self.stop_tokens.contains(&token) {
                break Finish::Stop;
            }
            let with_text = self.markers.contains(&token);
            pending.extend(vocab.token_to_piece(token, with_text, None));
            let text = take_utf8(&mut pending);
            // The triggers read the text as it comes (a marker held back below ends the answer
            // anyway); the client gets it once it cannot be the start of an end marker.
            if let Some(g) = guide.as_mut().filter(|g| !g.on && !text.is_empty()) {
                g.written.push_str(&text);
                if let Some(start) = g.triggers.start_in(&g.written) {
                    let matched = g.written[start..].to_string();
                    self.start_grammar(&mut g.grammar, &matched)?;
                    g.on = true;
                    g.written = String::new();
                }
            }
            let (text, at_marker) = stops.push(&text);
            if !text.is_empty() && job.events.blocking_send(Event::Text(text)).is_err() {
                return Err(Failure::Gone);
            }
            produced += 1;
            if at_marker {
                // What the model wrote after the marker is not part of the answer.
                pending.clear();
                stops = ending::StopTexts::default();
                break Finish::Stop;
            }
            if let Some(repeat) = repeats.push(token) {
                eprintln!(
                    "an answer was stopped: it wrote the same {} tokens {} times in a row",
                    repeat.span, repeat.times
                );
                break Finish::Repeated(repeat);
            }
            if produced >= limit || self.cached.len() + 1 >= n_ctx {
                break Finish::Length;
            }
            if started.elapsed() >= job.time_limit {
                eprintln!(
                    "an answer was stopped at this runtime's limit of {} s a request",
                    job.time_limit.as_secs()
                );
                break Finish::Length;
            }
            batch.clear();
            let pos = self.cached.len() as i32;
            batch
                .add(token, pos, &[0], true)
                .map_err(|e| Failure::Message(format!("the answer batch failed: {e}")))?;
            if let Err(e) = ctx.decode(&mut batch) {
                self.cached.clear();
                ctx.clear_kv_cache();
                return Err(Failure::Message(format!("generating failed: {e}")));
            }
            self.cached.push(token);
        };
        // What was held back as a possible marker, then a character cut short.
        let mut rest = stops.finish();
        rest.push_str(&String::from_utf8_lossy(&pending));
        if !rest.is_empty() && job.events.blocking_send(Event::Text(rest)).is_err() {
            return Err(Failure::Gone);
        }
        Ok(Event::Done {
            finish,
            prompt_tokens: prompt.len() as u32,
            cached_tokens: reuse as u32,
            completion_tokens: produced as u32,
            guided: guide.is_some_and(|g| g.on),
        })
    }

    /// Turn `grammar` on with the text its trigger matched: spelled out a byte at a time, each
    /// byte through a token whose text is exactly it, and each checked before the grammar takes
    /// it (llama.cpp ends the process on a token its grammar has no place for).
    fn start_grammar(&mut self, grammar: &mut LlamaSampler, matched: &str) -> Result<(), Failure> {
        let model = self.model;
        let bytes = self.bytes.get_or_insert_with(|| {
            let mut table = vec![None; 256];
            for (token, piece) in model.tokens(true) {
                if let [b] = piece[..] {
                    table[usize::from(b)].get_or_insert(token);
                }
            }
            table
        });
        for b in matched.bytes() {
            let token = bytes[usize::from(b)].ok_or_else(|| {
                Failure::Request(format!(
                    "the grammar cannot be started: this model has no token for the byte {b:#04x} its trigger matched"
                ))
            })?;
            if !allows(grammar, token) {
                return Err(Failure::Request(format!(
                    "the grammar does not accept the text its trigger matched ({matched:?}): \
                     a lazy grammar must start with what its triggers match"
                )));
            }
            grammar.accept(token);
        }
        Ok(())
    }
}

/// A job's grammar: off until one of its triggers matches the answer so far (on from the start
/// when it has none).
struct Guide {
    grammar: LlamaSampler,
    triggers: guide::Triggers,
    on: bool,
    /// The answer so far, while the grammar is off.
    written: String,
}

/// Whether `grammar` has a place for `token` now.
fn allows(grammar: &mut LlamaSampler, token: LlamaToken) -> bool {
    let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 1.0, 0.0)], false);
    one.apply_sampler(grammar);
    one.data[0].logit().is_finite()
}

/// The next token from the logits of output `idx`, accepted into the samplers.
///
/// With a grammar, the way llama.cpp's own sampler goes about it: the sampler's choice is
/// checked against the grammar alone (one token), and only when the grammar refuses it is the
/// whole vocabulary filtered by the grammar and the choice made again among what it allows.
/// Filtering all of a 49,000-token vocabulary on every token cost SmolLM2-135M about 30 % of its
/// speed; the check costs next to nothing. A grammar that allows no token at all ends the
/// request: llama.cpp would end the process on whatever token were given to it.
fn pick(
    ctx: &LlamaContext<'_>,
    idx: i32,
    sampler: &mut LlamaSampler,
    grammar: Option<&mut LlamaSampler>,
) -> Result<LlamaToken, Failure> {
    let Some(grammar) = grammar else {
        // `sample` accepts the token into the sampler too.
        return Ok(sampler.sample(ctx, idx));
    };
    let mut all = ctx.token_data_array_ith(idx);
    all.apply_sampler(sampler);
    let chosen = all.selected_token().filter(|t| allows(grammar, *t));
    let token = match chosen {
        Some(token) => token,
        None => {
            let mut allowed = ctx.token_data_array_ith(idx);
            allowed.apply_sampler(grammar);
            if !allowed.data.iter().any(|d| d.logit().is_finite()) {
                return Err(Failure::Request(
                    "the grammar allows no token of this model at this point of the answer".into(),
                ));
            }
            allowed.apply_sampler(sampler);
            allowed
                .selected_token()
                .filter(|t| allows(grammar, *t))
                .ok_or_else(|| {
                    Failure::Request(
                        "the sampler found no token the grammar allows at this point of the answer"
                            .into(),
                    )
                })?
        }
    };
    grammar.accept(token);
    sampler.accept(token);
    Ok(token)
}

/// The longest complete UTF-8 text at the start of `bytes`, taken out of it (a token may end
/// inside a character; the rest waits for the next token). Bytes that can never be UTF-8 are
/// replaced.
fn take_utf8(bytes: &mut Vec<u8>) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let text = text.to_string();
            bytes.clear();
            text
        }
        Err(e) if e.error_len().is_none() => {
            let valid = e.valid_up_to();
            let text = String::from_utf8_lossy(&bytes[..valid]).into_owned();
            bytes.drain(..valid);
            text
        }
        Err(_) => {
            let text = String::from_utf8_lossy(bytes).into_owned();
            bytes.clear();
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{context_for, take_utf8};

    #[test]
    fn the_context_is_the_smallest_of_trained_asked_and_what_memory_holds() {
        const MB: u64 = 1_000_000;
        // SmolLM2-135M's cache: 23 KB a token. Plenty of memory: the trained or asked size.
        assert_eq!(context_for(8192, None, 23_040, 8_000 * MB), (8192, None));
        assert_eq!(
            context_for(8192, Some(2048), 23_040, 8_000 * MB),
            (2048, None)
        );
        assert_eq!(
            context_for(8192, Some(100_000), 23_040, 8_000 * MB),
            (8192, None)
        );
        // A 1.7B model's 114 KB a token in 2 GB free: about 6,400 tokens, said so.
        let (n, note) = context_for(32768, None, 114_688, 2_000 * MB);
        assert_eq!(n % 256, 0);
        assert!((6_000..7_000).contains(&n), "{n}");
        assert!(note.unwrap().contains("memory free now"));
        // Almost nothing free: the least context, still a multiple of 256.
        assert_eq!(context_for(32768, None, 114_688, 100 * MB).0, 512);
        // Unknown sizes change nothing.
        assert_eq!(context_for(4096, None, 0, 0), (4096, None));
    }

    #[test]
    fn a_character_split_across_tokens_waits_for_its_end() {
        let euro = "€".as_bytes();
        let mut pending = vec![b'a', euro[0], euro[1]];
        assert_eq!(take_utf8(&mut pending), "a");
        assert_eq!(pending, &euro[..2]);
        pending.push(euro[2]);
        assert_eq!(take_utf8(&mut pending), "€");
        assert!(pending.is_empty());
        let mut broken = vec![b'x', 0xff, b'y'];
        assert_eq!(take_utf8(&mut broken), "x\u{fffd}y");
        assert!(broken.is_empty());
    }
}
