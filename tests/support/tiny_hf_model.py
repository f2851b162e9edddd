"""A tiny random-weight causal LM and its tokenizer, saved where lm-eval's ``hf`` model loads it.

Nothing comes from a hub: the tokenizer is a byte-level BPE trained on texts the caller gives
(e.g. the prompts of the task under test, so they become a few hundred tokens, not thousands),
wrapped with a ChatML chat template so ``--apply_chat_template`` has something to apply; the
model is a 2-layer Qwen2 with a 32-wide hidden state and weights drawn from a fixed seed, so the
same texts give the same model and the same greedy output on every run (same torch build)::

    folder = write_tiny_causal_lm(tmp_path / "model", texts)
    # lm_eval --model hf --model_args pretrained=<folder> ...

Needs ``torch``, ``transformers`` and ``tokenizers`` (the project's ``hf`` extra).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

PAD, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"

# ChatML, as Qwen2 models use it: each message between <|im_start|>role and <|im_end|>, then
# the assistant header the model continues from.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

VOCAB_SIZE = 1024
# Room for a whole prompt: lm-eval cuts contexts longer than this from the left.
MAX_POSITIONS = 4096
SEED = 0
# Weight init spread. Qwen2's default (0.02) gives near-flat logits, so greedy decoding repeats
# one token ("\n" 32 times); 0.5 makes a random model write varied text from the vocabulary.
INIT_STD = 0.5


def train_tokenizer(texts: Iterable[str]):
    """A byte-level BPE fitted to ``texts``, as a ``PreTrainedTokenizerFast`` with ChatML."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=[PAD, IM_START, IM_END],
        # Every byte is in the vocabulary: any text (SQL, schema, unseen words) can be encoded.
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token=IM_END,
        pad_token=PAD,
        chat_template=CHAT_TEMPLATE,
    )


def random_causal_lm(tokenizer):
    """A 2-layer Qwen2 with seeded random weights, sized to ``tokenizer``."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=MAX_POSITIONS,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
        initializer_range=INIT_STD,
    )
    torch.manual_seed(SEED)
    return Qwen2ForCausalLM(config).eval()


def write_tiny_causal_lm(folder: Path, texts: Iterable[str]) -> Path:
    """Train the tokenizer on ``texts``, build the model, save both to ``folder``; return it."""
    tokenizer = train_tokenizer(texts)
    model = random_causal_lm(tokenizer)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


if __name__ == "__main__":  # python -m support.tiny_hf_model FOLDER TEXTS_JSON (support.hf_python)
    import json
    import sys

    texts = json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))
    write_tiny_causal_lm(Path(sys.argv[1]), texts)
