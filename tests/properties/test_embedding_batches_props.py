"""The embeddings batching plan, for any inputs and limits: consecutive slices that
cover every input once, in order, each within both caps unless one input alone is over."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from modelwire.embeddings import estimate_input_tokens, plan_batches
from modelwire.providers.embedding import EmbeddingSpec

texts = st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=60)
specs = st.builds(EmbeddingSpec, max_inputs=st.integers(1, 10),
                  max_request_tokens=st.one_of(st.none(), st.integers(1, 120)))


@given(texts, specs)
def test_batches_cover_every_input_in_order_within_the_caps(inputs, spec):
    batches = plan_batches(inputs, spec)
    assert batches[0][0] == 0 and batches[-1][1] == len(inputs)
    assert all(a[1] == b[0] for a, b in pairwise(batches))
    for start, stop in batches:
        assert 0 < stop - start <= spec.max_inputs
        cost = sum(estimate_input_tokens(t) for t in inputs[start:stop])
        assert spec.max_request_tokens is None or cost <= spec.max_request_tokens or stop - start == 1


@given(texts, specs)
def test_no_two_neighbours_could_have_been_one_request(inputs, spec):
    # greedy: a batch ends only because the next input would not fit
    batches = plan_batches(inputs, spec)
    for (start, stop), _ in pairwise(batches):
        over_count = stop - start + 1 > spec.max_inputs
        cost = sum(estimate_input_tokens(t) for t in inputs[start:stop + 1])
        over_tokens = spec.max_request_tokens is not None and cost > spec.max_request_tokens
        assert over_count or over_tokens
