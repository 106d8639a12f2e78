//! Small GGUF files written byte by byte, for the model library's tests: a header with the
//! metadata the library reads (and a tokenizer array it must skip), one F32 tensor, its data.

/// A GGUF file of `architecture` with a trained context of `context`, quantisation
/// `file_type` (llama.cpp's `general.file_type`: 15 is Q4_K_M) and a chat template.
pub fn tiny(architecture: &str, context: u32, file_type: u32) -> Vec<u8> {
    with_template(
        architecture,
        context,
        file_type,
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}",
    )
}

/// [`tiny`] with the chat template `template`.
pub fn with_template(architecture: &str, context: u32, file_type: u32, template: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    out.extend_from_slice(b"GGUF");
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&1u64.to_le_bytes()); // tensors
    out.extend_from_slice(&7u64.to_le_bytes()); // metadata entries
                                                // general.architecture: string
    string(&mut out, "general.architecture");
    out.extend_from_slice(&8u32.to_le_bytes());
    string(&mut out, architecture);
    // general.name: string
    string(&mut out, "general.name");
    out.extend_from_slice(&8u32.to_le_bytes());
    string(&mut out, "Tiny Test Model");
    // general.file_type: u32
    string(&mut out, "general.file_type");
    out.extend_from_slice(&4u32.to_le_bytes());
    out.extend_from_slice(&file_type.to_le_bytes());
    // {arch}.context_length: u32
    string(&mut out, &format!("{architecture}.context_length"));
    out.extend_from_slice(&4u32.to_le_bytes());
    out.extend_from_slice(&context.to_le_bytes());
    // tokenizer.ggml.tokens: array of strings
    string(&mut out, "tokenizer.ggml.tokens");
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&8u32.to_le_bytes());
    let tokens = ["<s>", "</s>", "hello", "world"];
    out.extend_from_slice(&(tokens.len() as u64).to_le_bytes());
    for t in tokens {
        string(&mut out, t);
    }
    // tokenizer.ggml.scores: array of f32
    string(&mut out, "tokenizer.ggml.scores");
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&6u32.to_le_bytes());
    out.extend_from_slice(&(tokens.len() as u64).to_le_bytes());
    for _ in tokens {
        out.extend_from_slice(&0f32.to_le_bytes());
    }
    // tokenizer.chat_template: string
    string(&mut out, "tokenizer.chat_template");
    out.extend_from_slice(&8u32.to_le_bytes());
    string(&mut out, template);
    // The tensor: name, 2 dimensions (8 x 4), F32, offset 0.
    string(&mut out, "token_embd.weight");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&8u64.to_le_bytes());
    out.extend_from_slice(&4u64.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    while out.len() % 32 != 0 {
        out.push(0);
    }
    for i in 0..32u32 {
        out.extend_from_slice(&(i as f32).to_le_bytes());
    }
    out
}

/// [`tiny`] padded with `extra` bytes of more tensor data, for downloads long enough to cut,
/// pause and resume (the padding is a second F32 tensor the header lists).
pub fn sized(architecture: &str, extra: usize) -> Vec<u8> {
    let mut bytes = tiny(architecture, 4096, 15);
    // Deterministic, not compressible, so a wrong byte anywhere changes the hash.
    let mut x: u32 = 0x9e37_79b9;
    bytes.extend((0..extra).map(|_| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x as u8
    }));
    bytes
}
