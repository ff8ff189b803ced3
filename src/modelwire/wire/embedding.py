"""``EmbeddingSpec``: what one provider's ``POST <base_url>/embeddings`` takes, as data.

A catalog row that offers embeddings carries one (``ProviderProfile.embeddings``); a row
without one has no embeddings endpoint and :meth:`modelwire.Client.embed` refuses it by
name. Limits are the provider's documented ones per request (each row cites its page and
the date it was read); the batching plan in :mod:`modelwire.embeddings` keeps under them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["EmbeddingEncoding", "EmbeddingSpec", "InputType"]

# what the text is for: Voyage-style retrieval models embed a query and a document
# differently (each row maps these to its own field and values, or has no field)
InputType: TypeAlias = Literal["query", "document"]
# the vectors on the wire: JSON floats, or little-endian float32 in base64 (a quarter of
# the bytes and no float parsing; OpenAI's SDK asks for it by default)
EmbeddingEncoding: TypeAlias = Literal["float", "base64"]


@dataclass(frozen=True, slots=True)
class EmbeddingSpec:
    """One endpoint's embeddings: known models, per-request limits and field names."""

    models: tuple[str, ...] = ()  # known embedding model ids (informative; others pass)
    max_inputs: int = 2048  # inputs in one request
    max_request_tokens: int | None = None  # tokens summed over one request's inputs
    # the field that sets the vector size (None: the size cannot be chosen here)
    dimensions_field: str | None = "dimensions"
    # the field that says query or document, and its value for each (None: no such field)
    input_type_field: str | None = None
    input_types: tuple[tuple[InputType, str], ...] = ()
    base64: bool = True  # takes encoding_format: base64
    source: str = ""  # where the limits come from, and when it was read

    def input_type_value(self, input_type: InputType) -> str | None:
        """The wire value for ``input_type`` here (None: this endpoint cannot say it)."""
        for name, value in self.input_types:
            if name == input_type:
                return value
        return None
