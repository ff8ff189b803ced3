"""Every entry of the classification table pinned: each trigger phrase, code and status of
each rule reaches that rule (deleting or changing any entry fails a case here).

The cases are written out, not derived from :data:`RULES`, so that removing an entry from
the table cannot remove its test with it; ``test_every_table_entry_has_a_case`` makes a new
entry without a case fail instead.
"""

from __future__ import annotations

import pytest

from modelwire.errors import ProviderError
from modelwire.resilience import classify
from modelwire.resilience.classify import RULES

# (the rule's why, which entry, status, code, error message, kind)
CASES = [
    ('a safety filter refused; retrying the same input cannot help', 'phrase:content_filter', None, None, 'content_filter', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'phrase:content management policy', None, None, 'content management policy', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'phrase:responsibleaipolicyviolation', None, None, 'responsibleaipolicyviolation', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'phrase:violates our usage polic', None, None, 'violates our usage polic', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'phrase:flagged by our safety', None, None, 'flagged by our safety', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'phrase:your request was flagged', None, None, 'your request was flagged', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'phrase:flagged for possible', None, None, 'flagged for possible', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'phrase:new_sensitive', None, None, 'new_sensitive', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'phrase:content policy', None, None, 'content policy', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'phrase:safety system', None, None, 'safety system', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'code:content_filter', None, 'content_filter', 'x', 'content_filter'),
    ('a safety filter refused; retrying the same input cannot help', 'code:content_policy_violation', None, 'content_policy_violation', 'x', 'content_filter'),
    ('thinking signature rejected', 'phrase:thinking', 400, None, 'thinking signature', 'signature_400'),
    ('thinking signature rejected', 'phrase:reasoning', 400, None, 'reasoning signature', 'signature_400'),
    ('thinking signature rejected', 'also:cannot be modified', 400, None, 'thinking cannot be modified', 'signature_400'),
    ('thinking signature rejected', 'also:must remain as they were', 400, None, 'thinking must remain as they were', 'signature_400'),
    ('encrypted reasoning rejected', 'phrase:encrypted content', 400, None, 'encrypted content', 'signature_400'),
    ('encrypted reasoning rejected', 'code:invalid_encrypted_content', 400, 'invalid_encrypted_content', 'x', 'signature_400'),
    ('llama.cpp grammar error', 'phrase:error parsing grammar', 400, None, 'error parsing grammar', 'schema_400'),
    ('llama.cpp grammar error', 'phrase:json-schema-to-grammar', 400, None, 'json-schema-to-grammar', 'schema_400'),
    ('llama.cpp grammar error', 'phrase:failed to parse grammar', 400, None, 'failed to parse grammar', 'schema_400'),
    ('a setting this model does not take', 'code:unknown_parameter', 400, 'unknown_parameter', 'x', 'param_400'),
    ('a setting this model does not take', 'code:unsupported_parameter', 400, 'unsupported_parameter', 'x', 'param_400'),
    ('a setting this model does not take', 'code:unsupported_value', 400, 'unsupported_value', 'x', 'param_400'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'phrase:overloaded', 429, None, 'overloaded', 'overloaded'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'phrase:at capacity', 429, None, 'at capacity', 'overloaded'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'phrase:over capacity', 429, None, 'over capacity', 'overloaded'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'phrase:server is busy', 429, None, 'server is busy', 'overloaded'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'phrase:high demand', 429, None, 'high demand', 'overloaded'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'phrase:temporarily unavailable', 429, None, 'temporarily unavailable', 'overloaded'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'phrase:engine is currently overloaded', 429, None, 'engine is currently overloaded', 'overloaded'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'code:1305', 429, '1305', 'x', 'overloaded'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'code:overloaded_error', 429, 'overloaded_error', 'x', 'overloaded'),
    ('OpenRouter upstream rate limit', 'phrase:provider returned error', 429, None, 'provider returned error', 'rate_limit'),
    ('OpenRouter upstream rate limit', 'phrase:rate-limited upstream', 429, None, 'rate-limited upstream', 'rate_limit'),
    ('OpenAI insufficient_quota is a spent balance, not a rate', 'code:billing_hard_limit_reached', None, 'billing_hard_limit_reached', 'x', 'billing'),
    ('OpenAI insufficient_quota is a spent balance, not a rate', 'code:insufficient_quota', None, 'insufficient_quota', 'x', 'billing'),
    ('quota with a reset hint', 'phrase:usage limit', 402, None, 'usage limit try again', 'rate_limit'),
    ('quota with a reset hint', 'phrase:quota', 402, None, 'quota try again', 'rate_limit'),
    ('quota with a reset hint', 'phrase:limit exceeded', 402, None, 'limit exceeded try again', 'rate_limit'),
    ('quota with a reset hint', 'phrase:insufficient credit', 402, None, 'insufficient credit try again', 'rate_limit'),
    ('quota with a reset hint', 'phrase:credit balance', 402, None, 'credit balance try again', 'rate_limit'),
    ('quota with a reset hint', 'phrase:exceeded your current', 402, None, 'exceeded your current try again', 'rate_limit'),
    ('quota with a reset hint', 'also:retry', 402, None, 'usage limit retry', 'rate_limit'),
    ('quota with a reset hint', 'also:resets at', 402, None, 'usage limit resets at', 'rate_limit'),
    ('quota with a reset hint', 'also:reset in', 402, None, 'usage limit reset in', 'rate_limit'),
    ('quota with a reset hint', 'also:resets in', 402, None, 'usage limit resets in', 'rate_limit'),
    ('quota with a reset hint', 'also:wait', 402, None, 'usage limit wait', 'rate_limit'),
    ('quota with a reset hint', 'also:requests remaining', 402, None, 'usage limit requests remaining', 'rate_limit'),
    ('quota with a reset hint', 'also:periodic', 402, None, 'usage limit periodic', 'rate_limit'),
    ('quota with a reset hint', 'also:window', 402, None, 'usage limit window', 'rate_limit'),
    ('quota with a reset hint', 'also:per minute', 402, None, 'usage limit per minute', 'rate_limit'),
    ('quota with a reset hint', 'also:per day', 402, None, 'usage limit per day', 'rate_limit'),
    ('402 without a reset hint', 'status:402', 402, None, 'x', 'billing'),
    ("429 'usage limit reached' / 'quota' is a spent quota", 'phrase:usage limit', 429, None, 'usage limit', 'billing'),
    ("429 'usage limit reached' / 'quota' is a spent quota", 'phrase:quota', 429, None, 'quota', 'billing'),
    ("429 'usage limit reached' / 'quota' is a spent quota", 'phrase:limit exceeded', 429, None, 'limit exceeded', 'billing'),
    ("429 'usage limit reached' / 'quota' is a spent quota", 'phrase:insufficient credit', 429, None, 'insufficient credit', 'billing'),
    ("429 'usage limit reached' / 'quota' is a spent quota", 'phrase:credit balance', 429, None, 'credit balance', 'billing'),
    ("429 'usage limit reached' / 'quota' is a spent quota", 'phrase:exceeded your current', 429, None, 'exceeded your current', 'billing'),
    ('403 spending / key limit', 'phrase:insufficient_quota', 403, None, 'insufficient_quota', 'billing'),
    ('403 spending / key limit', 'phrase:billing', 403, None, 'billing', 'billing'),
    ('403 spending / key limit', 'phrase:payment required', 403, None, 'payment required', 'billing'),
    ('403 spending / key limit', 'phrase:credit balance', 403, None, 'credit balance', 'billing'),
    ('403 spending / key limit', 'phrase:insufficient balance', 403, None, 'insufficient balance', 'billing'),
    ('403 spending / key limit', 'phrase:spending limit', 403, None, 'spending limit', 'billing'),
    ('403 spending / key limit', 'phrase:key limit exceeded', 403, None, 'key limit exceeded', 'billing'),
    ('403 spending / key limit', 'phrase:out of credits', 403, None, 'out of credits', 'billing'),
    ('403 spending / key limit', 'phrase:insufficient credits', 403, None, 'insufficient credits', 'billing'),
    ('401/403', 'status:401', 401, None, 'x', 'auth'),
    ('401/403', 'status:403', 403, None, 'x', 'auth'),
    ('429', 'status:429', 429, None, 'x', 'rate_limit'),
    ('prompt too long', 'phrase:context length', None, None, 'context length', 'context_length'),
    ('prompt too long', 'phrase:context_length', None, None, 'context_length', 'context_length'),
    ('prompt too long', 'phrase:context window', None, None, 'context window', 'context_length'),
    ('prompt too long', 'phrase:maximum context', None, None, 'maximum context', 'context_length'),
    ('prompt too long', 'phrase:prompt is too long', None, None, 'prompt is too long', 'context_length'),
    ('prompt too long', 'phrase:too many tokens', None, None, 'too many tokens', 'context_length'),
    ('prompt too long', 'phrase:input is too long', None, None, 'input is too long', 'context_length'),
    ('prompt too long', 'phrase:reduce the length', None, None, 'reduce the length', 'context_length'),
    ('prompt too long', 'phrase:max_model_len', None, None, 'max_model_len', 'context_length'),
    ('prompt too long', 'phrase:n_ctx_slot', None, None, 'n_ctx_slot', 'context_length'),
    ('prompt too long', 'phrase:slot context', None, None, 'slot context', 'context_length'),
    ('prompt too long', "phrase:exceeds the model's", None, None, "exceeds the model's", 'context_length'),
    ('prompt too long', 'phrase:超过最大长度', None, None, '超过最大长度', 'context_length'),
    ('prompt too long', 'phrase:上下文长度', None, None, '上下文长度', 'context_length'),
    ('prompt too long', 'code:context_length_exceeded', None, 'context_length_exceeded', 'x', 'context_length'),
    ('prompt too long', 'code:string_above_max_length', None, 'string_above_max_length', 'x', 'context_length'),
    ('unknown model id', 'phrase:model not found', 400, None, 'model not found', 'model_not_found'),
    ('unknown model id', 'phrase:model_not_found', 400, None, 'model_not_found', 'model_not_found'),
    ('unknown model id', 'phrase:does not exist', 400, None, 'does not exist', 'model_not_found'),
    ('unknown model id', 'phrase:unknown model', 400, None, 'unknown model', 'model_not_found'),
    ('unknown model id', 'phrase:no such model', 400, None, 'no such model', 'model_not_found'),
    ('unknown model id', 'phrase:invalid model', 400, None, 'invalid model', 'model_not_found'),
    ('unknown model id', 'phrase:model is not available', 400, None, 'model is not available', 'model_not_found'),
    ('unknown model id', 'phrase:not a valid model', 400, None, 'not a valid model', 'model_not_found'),
    ('unknown model id', 'phrase:no endpoints found', 400, None, 'no endpoints found', 'model_not_found'),
    ('unknown model id', 'code:deploymentnotfound', 400, 'deploymentnotfound', 'x', 'model_not_found'),
    ('unknown model id', 'code:invalid_model', 400, 'invalid_model', 'x', 'model_not_found'),
    ('unknown model id', 'code:model_not_available', 400, 'model_not_available', 'x', 'model_not_found'),
    ('unknown model id', 'code:model_not_found', 400, 'model_not_found', 'x', 'model_not_found'),
    ('Anthropic 404 names the model', 'phrase:model:', 404, None, 'model:', 'model_not_found'),
    ('billing phrase', 'phrase:insufficient_quota', 400, None, 'insufficient_quota', 'billing'),
    ('billing phrase', 'phrase:billing', 400, None, 'billing', 'billing'),
    ('billing phrase', 'phrase:payment required', 400, None, 'payment required', 'billing'),
    ('billing phrase', 'phrase:credit balance', 400, None, 'credit balance', 'billing'),
    ('billing phrase', 'phrase:insufficient balance', 400, None, 'insufficient balance', 'billing'),
    ('billing phrase', 'phrase:spending limit', 400, None, 'spending limit', 'billing'),
    ('billing phrase', 'phrase:key limit exceeded', 400, None, 'key limit exceeded', 'billing'),
    ('billing phrase', 'phrase:out of credits', 400, None, 'out of credits', 'billing'),
    ('billing phrase', 'phrase:insufficient credits', 400, None, 'insufficient credits', 'billing'),
    ('408/409/425 are worth repeating', 'status:408', 408, None, 'x', 'transient'),
    ('408/409/425 are worth repeating', 'status:409', 409, None, 'x', 'transient'),
    ('408/409/425 are worth repeating', 'status:425', 425, None, 'x', 'transient'),
    ('529 / 503', 'status:503', 503, None, 'x', 'overloaded'),
    ('529 / 503', 'status:529', 529, None, 'x', 'overloaded'),
    ('thinking signature rejected', 'status:400', 400, None, 'thinking signature', 'signature_400'),
    ('encrypted reasoning rejected', 'status:400', 400, None, 'encrypted content', 'signature_400'),
    ('llama.cpp grammar error', 'status:400', 400, None, 'error parsing grammar', 'schema_400'),
    ('llama.cpp grammar error', 'status:500', 500, None, 'error parsing grammar', 'schema_400'),
    ('a setting this model does not take', 'status:400', 400, 'unknown_parameter', 'x', 'param_400'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'status:429', 429, None, 'overloaded', 'overloaded'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'status:503', 503, None, 'overloaded', 'overloaded'),
    ('a 429/503 that says overloaded is the endpoint, not the key', 'status:529', 529, None, 'overloaded', 'overloaded'),
    ('OpenRouter upstream rate limit', 'status:429', 429, None, 'provider returned error', 'rate_limit'),
    ('quota with a reset hint', 'status:402', 402, None, 'usage limit try again', 'rate_limit'),
    ('quota with a reset hint', 'status:429', 429, None, 'usage limit try again', 'rate_limit'),
    ("429 'usage limit reached' / 'quota' is a spent quota", 'status:429', 429, None, 'usage limit', 'billing'),
    ('403 spending / key limit', 'status:403', 403, None, 'insufficient_quota', 'billing'),
    ('unknown model id', 'status:400', 400, None, 'model not found', 'model_not_found'),
    ('unknown model id', 'status:404', 404, None, 'model not found', 'model_not_found'),
    ('unknown model id', 'status:422', 422, None, 'model not found', 'model_not_found'),
    ('Anthropic 404 names the model', 'status:404', 404, None, 'model:', 'model_not_found'),
    ('billing phrase', 'status:400', 400, None, 'insufficient_quota', 'billing'),
    ('billing phrase', 'status:404', 404, None, 'insufficient_quota', 'billing'),
]


@pytest.mark.parametrize(("why", "entry", "status", "code", "message", "kind"), CASES,
                         ids=[f"{c[0]} | {c[1]}" for c in CASES])
def test_table_entry_reaches_its_rule(why, entry, status, code, message, kind):
    failure = classify(ProviderError(message, status=status, code=code))
    assert (failure.kind, failure.reason) == (kind, why)


def test_every_table_entry_has_a_case():
    covered = {(c[0], c[1]) for c in CASES}
    missing = []
    for rule in RULES:
        entries = [f"phrase:{p}" for p in rule.phrases] + [f"code:{c}" for c in rule.codes]
        entries += [f"also:{a}" for a in rule.also[1:]]
        entries += [f"status:{s}" for s in rule.statuses or ()]
        missing += [(rule.why, e) for e in entries if (rule.why, e) not in covered]
    assert not missing
