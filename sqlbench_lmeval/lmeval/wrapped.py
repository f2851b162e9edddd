"""What our wrapper models (``sqlbench-repair``, ``sqlbench-metered``) share: :class:`WrappedModel`,
an lm-eval model that hands everything but ``generate_until`` to the ``base`` model it wraps,
and :func:`is_ours`, which tells our tasks' requests (the only ones they change) from others'."""

from __future__ import annotations

from lm_eval.api.model import LM

#: Document fields that mark a request of our tasks (see ``scoring.item.Item.to_doc``).
OUR_DOC_FIELDS = ("gold_sql", "db_path", "engine")


def is_ours(request) -> bool:
    """True for a request of one of our tasks (single-answer and sampled alike)."""
    doc = request.doc
    return isinstance(doc, dict) and all(name in doc for name in OUR_DOC_FIELDS)


class WrappedModel(LM):
    """An lm-eval model around ``self.base`` (set by the subclass): loglikelihood requests and
    what lm-eval asks of a model besides requests are the base model's answers."""

    base: LM

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        return self.base.loglikelihood(requests, disable_tqdm)

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        return self.base.loglikelihood_rolling(requests, disable_tqdm)

    def apply_chat_template(self, chat_history, add_generation_prompt: bool = True):
        return self.base.apply_chat_template(chat_history, add_generation_prompt)

    def chat_template(self, chat_template=False):
        return self.base.chat_template(chat_template)

    @property
    def tokenizer_name(self) -> str:
        return self.base.tokenizer_name

    @property
    def rank(self):
        return self.base.rank

    @property
    def world_size(self):
        return self.base.world_size
