"""The provider catalog: one data row per endpoint, quirks as fields.

Base URLs follow each SDK's convention: OpenAI-style ones include the version
segment (``/v1``, ``/v4``...; the codec appends ``/chat/completions``);
Anthropic-style ones do not (the codec appends ``/v1/messages``). Key variables
are listed in priority order. ``issuer`` names whose reasoning blocks an
endpoint mints; ``accepts_issuers`` whose it verifies besides its own.

Adding a plain OpenAI-compatible provider is one ``_row(...)`` call below. A
provider whose quirk needs code gets a small module (``kimi.py``, ``xai.py``,
``gemini.py``, ``deepseek.py``, ``azure.py``).

Rows whose base URL is filled at run time: ``custom`` (``resolve`` builds it
from ``base_url`` + ``api_mode``), ``emulator*`` (the Client points them at a
running or in-process emulator) and ``azure`` (from ``AZURE_OPENAI_ENDPOINT``).
"""

from __future__ import annotations

from typing import Any

from .azure import TEMPLATE as AZURE_TEMPLATE
from .azure import AzureOpenAIProfile
from .deepseek import DeepSeekProfile
from .embedding import EmbeddingSpec
from .gemini import GeminiProfile
from .kimi import KimiAnthropicProfile, MoonshotProfile
from .profile import ProviderProfile
from .xai import XAIProfile

__all__ = ["ALIASES", "CATALOG", "RUNTIME_BASE_URL", "VARIANTS", "variant"]

_ANY_TOOL_CHOICE = frozenset({"auto", "none", "required", "function"})
_NO_REQUIRED = frozenset({"auto", "none", "function"})
# Anthropic signatures verify wherever Anthropic's own keys sign: direct, Bedrock, Vertex.
_ANTHROPIC_FAMILY = frozenset({"anthropic", "bedrock", "vertex"})


def _row(cls: type[ProviderProfile] = ProviderProfile, **fields: Any) -> ProviderProfile:
    fields.setdefault("issuer", fields["name"])
    return cls(**fields)


# OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and later) answer 400 "Unsupported
# parameter: 'stop' is not supported with this model"
_OPENAI_NO_STOP = r"(?:^|/)(?:o\d|gpt-(?:5|[6-9]|\d\d))"

# OpenAI's own tool_choice values (allowed_tools: restrict the callable tools, keep the list)
_OPENAI_CHOICES = frozenset({"auto", "none", "required", "function", "allowed_tools"})

# ---------------------------------------------------------------- embeddings
# Each endpoint's POST /embeddings limits per request, from the page named (read
# 2026-12-01). Where a page gives no cap, the value is a conservative choice, said so:
# a cap set too low only costs extra requests, one set too high costs a 400.
_OPENAI_EMBED = EmbeddingSpec(
    models=("text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002"),
    # "any array must be 2048 dimensions or less ... a maximum of 300,000 tokens summed
    # across all inputs in a single request"
    max_inputs=2048, max_request_tokens=300_000,
    source="https://platform.openai.com/docs/api-reference/embeddings/create (2026-12-01)",
)
_AZURE_EMBED = EmbeddingSpec(
    models=_OPENAI_EMBED.models,  # deployment names in practice: sent as `model`
    # "Max number of inputs in array with /embeddings: 2048"; the token cap is OpenAI's
    max_inputs=2048, max_request_tokens=300_000,
    source="https://learn.microsoft.com/en-us/azure/ai-foundry/openai/quotas-limits (2026-12-01)",
)
_MISTRAL_EMBED = EmbeddingSpec(
    models=("mistral-embed", "codestral-embed"),
    # 257 inputs answer "Too many inputs in request, split into more batches." (rig-core
    # providers/mistral/embedding.rs, checked against the live API); codestral-embed
    # takes output_dimension, mistral-embed is 1024 wide. Token cap: 16,384 (conservative)
    max_inputs=256, max_request_tokens=16_384, dimensions_field="output_dimension",
    source="https://docs.mistral.ai/api/endpoint/embeddings (2026-12-01)",
)
_NVIDIA_EMBED = EmbeddingSpec(
    models=("nvidia/nv-embedqa-e5-v5", "nvidia/llama-3.2-nv-embedqa-1b-v2"),
    # NV-Embed-QA and E5 models "operate in passage or query mode, and thus require the
    # input_type parameter" (Voyage-style, with "passage" for documents); Matryoshka
    # models take dimensions. No batch cap on the page: 50 (conservative); floats
    max_inputs=50, base64=False,
    input_type_field="input_type", input_types=(("query", "query"), ("document", "passage")),
    source="https://docs.nvidia.com/nim/nemo-retriever/text-embedding/latest/reference.html (2026-12-01)",
)
_GEMINI_EMBED = EmbeddingSpec(
    models=("gemini-embedding-001",),
    # the OpenAI-compatible endpoint stands on batchEmbedContents: at most 100 requests a
    # batch; base64 not documented there, so floats are asked for
    max_inputs=100, base64=False,
    source="https://ai.google.dev/gemini-api/docs/openai#embeddings (2026-12-01)",
)
_TOGETHER_EMBED = EmbeddingSpec(
    models=("BAAI/bge-large-en-v1.5", "BAAI/bge-base-en-v1.5",
            "intfloat/multilingual-e5-large-instruct"),
    # no per-request cap on the page: 256 (conservative); no dimensions, floats
    max_inputs=256, dimensions_field=None, base64=False,
    source="https://docs.together.ai/reference/embeddings-2 (2026-12-01)",
)
_FIREWORKS_EMBED = EmbeddingSpec(
    models=("nomic-ai/nomic-embed-text-v1.5", "fireworks/qwen3-embedding-8b"),
    # nomic v1.5 is Matryoshka-trained (dimensions); no cap on the page: 256 (conservative)
    max_inputs=256, base64=False,
    source="https://docs.fireworks.ai/guides/querying-embeddings-models (2026-12-01)",
)
_DEEPINFRA_EMBED = EmbeddingSpec(
    models=("BAAI/bge-m3", "Qwen/Qwen3-Embedding-8B", "intfloat/e5-large-v2"),
    # no cap on the page: 256 (conservative)
    max_inputs=256, base64=False,
    source="https://deepinfra.com/docs/advanced/openai_api (2026-12-01)",
)
# Local servers: no documented cap (the server batches itself); 256 keeps one request's
# memory modest on small machines
_OLLAMA_EMBED = EmbeddingSpec(
    models=("nomic-embed-text", "mxbai-embed-large", "all-minilm"), max_inputs=256, base64=False,
    source="https://docs.ollama.com/api/openai-compatibility (2026-12-01)",
)
_VLLM_EMBED = EmbeddingSpec(  # takes encoding_format base64 and, for Matryoshka models, dimensions
    max_inputs=256,
    source="https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html#embeddings-api (2026-12-01)",
)
_LMSTUDIO_EMBED = EmbeddingSpec(
    models=("text-embedding-nomic-embed-text-v1.5",), max_inputs=256, dimensions_field=None,
    base64=False, source="https://lmstudio.ai/docs/app/api/endpoints/openai (2026-12-01)",
)
_LLAMACPP_EMBED = EmbeddingSpec(  # llama-server --embeddings; encoding_format base64 taken
    max_inputs=256, dimensions_field=None,
    source="https://github.com/ggml-org/llama.cpp/tree/master/tools/server (2026-12-01)",
)
# a custom OpenAI-compatible server: OpenAI's input cap, floats unless asked otherwise
_CUSTOM_EMBED = EmbeddingSpec(max_inputs=2048, base64=False, source="OpenAI's shape")
# the emulator enforces OpenAI's limits and also takes Voyage-style input_type
_EMULATOR_EMBED = EmbeddingSpec(
    models=("emulator-embed-1", "text-embedding-3-small", "text-embedding-3-large"),
    max_inputs=2048, max_request_tokens=300_000,
    input_type_field="input_type", input_types=(("query", "query"), ("document", "document")),
    source="modelwire.emulator.embeddings",
)

_ROWS: list[ProviderProfile] = [
    # ---------------------------------------------------------------- first parties
    _row(
        name="openai", raw_passthrough=True, base_url="https://api.openai.com/v1", key_env=("OPENAI_API_KEY",),
        docs_url="https://platform.openai.com/docs/api-reference/chat",
        # reasoning models reject max_tokens ("Use 'max_completion_tokens' instead")
        max_tokens_field="max_completion_tokens",
        reasoning_request="reasoning_effort", developer_role=True, no_stop_models=_OPENAI_NO_STOP,
        tool_choice_values=_OPENAI_CHOICES,
        embeddings=_OPENAI_EMBED,
    ),
    _row(
        name="anthropic", raw_passthrough=True, base_url="https://api.anthropic.com", api_mode="anthropic_messages",
        auth_style="x-api-key", key_env=("ANTHROPIC_API_KEY",),
        docs_url="https://docs.anthropic.com/en/api/messages",
        accepts_issuers=_ANTHROPIC_FAMILY,
        anthropic_version="2026-10-21",  # what the current official SDK (2.x) sends
        fast_mode=True, vision_in_tool_results=True, mid_conversation_system=True,
        # "tools: Tool names must be unique." (peer-lessons 17)
        unique_tool_names=True, tool_id_format="anthropic", counts_tokens=True,
    ),
    _row(
        name="openrouter", raw_passthrough=True, base_url="https://openrouter.ai/api/v1",
        key_env=("OPENROUTER_API_KEY",), docs_url="https://openrouter.ai/docs/api-reference",
        # Gemini 3 and Claude via OpenRouter need reasoning_details back verbatim on
        # tool turns (OpenRouterTeam/typescript-sdk#120, Roo-Code#9506)
        reasoning_echo="reasoning_details", reasoning_request="openrouter",
    ),
    _row(
        DeepSeekProfile, name="deepseek", base_url="https://api.deepseek.com",
        key_env=("DEEPSEEK_API_KEY",), docs_url="https://api-docs.deepseek.com",
        # thinking mode: reasoning_content must come back on every assistant turn
        # that made tool calls, else 400 (peer-lessons 9)
        reasoning_echo="required", reasoning_request="thinking_flag",
        vision=False,  # deepseek-chat / -reasoner / V4 take text only
        unique_tool_names=True,  # 400 on duplicate tool names (peer-lessons 17)
    ),
    _row(
        # DeepSeek's Anthropic-compatible endpoint (x-api-key; anthropic-version ignored)
        name="deepseek-anthropic", base_url="https://api.deepseek.com/anthropic",
        api_mode="anthropic_messages", auth_style="x-api-key", key_env=("DEEPSEEK_API_KEY",),
        issuer="deepseek", docs_url="https://api-docs.deepseek.com/guides/anthropic_api",
        anthropic_version="2023-06-01",
        # thinking goes back unsigned, rebuilt from reasoning_content; signed blocks
        # from Anthropic are rejected there (hermes-behaviours 2.4, #16748)
        unsigned_thinking_echo=True,
        fine_grained_tool_streaming=False,  # a Claude-only per-tool field
        vision=False, unique_tool_names=True, tool_id_format="anthropic",
        # "输出长度 最大 384K" (deepseek-flash, deepseek-v4-pro):
        # https://api-docs.deepseek.com/zh-cn/quick_start/pricing (checked 2026-12-01)
        max_output=393_216,
    ),
    _row(
        MoonshotProfile, name="moonshot", base_url="https://api.moonshot.ai/v1",
        key_env=("MOONSHOT_API_KEY", "KIMI_API_KEY"),
        docs_url="https://platform.moonshot.ai/docs/api/chat",
        # Kimi thinking models require reasoning_content on tool-call turns
        reasoning_echo="required", reasoning_request="thinking_flag",
        unique_tool_names=True,
    ),
    _row(
        MoonshotProfile, name="moonshot-cn", base_url="https://api.moonshot.cn/v1",
        key_env=("KIMI_CN_API_KEY",), issuer="moonshot",  # .cn keys differ from .ai keys
        docs_url="https://platform.moonshot.cn/docs/api/chat",
        reasoning_echo="required", reasoning_request="thinking_flag", unique_tool_names=True,
    ),
    _row(
        # Kimi's Anthropic-compatible endpoint (what Moonshot documents for Claude Code):
        # https://www.developersdigest.tech/reference/api-compatibility/moonshot (checked
        # 2026-12-01; "ANTHROPIC_BASE_URL https://api.moonshot.ai/anthropic")
        KimiAnthropicProfile, name="moonshot-anthropic", base_url="https://api.moonshot.ai/anthropic",
        api_mode="anthropic_messages", auth_style="x-api-key",
        key_env=("MOONSHOT_API_KEY", "KIMI_API_KEY"), issuer="moonshot",
        docs_url="https://platform.kimi.ai/docs/api/overview", anthropic_version="2023-06-01",
        # thinking goes back unsigned, rebuilt from reasoning_content (hermes-behaviours 2.4)
        unsigned_thinking_echo=True, fine_grained_tool_streaming=False,
        unique_tool_names=True, tool_id_format="anthropic",
        # kimi-k2.6 / k2.5 / k2-thinking: 262,144 max output; no first-party table found,
        # https://docs.openclaw.ai/providers/moonshot (checked 2026-12-01)
        max_output=262_144,
    ),
    _row(
        name="dashscope", base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        key_env=("DASHSCOPE_API_KEY",),
        docs_url="https://www.alibabacloud.com/help/en/model-studio/compatibility-of-openai-with-dashscope",
        reasoning_request="enable_thinking",  # Qwen3 hybrid models: enable_thinking
    ),
    _row(
        name="zai", base_url="https://api.z.ai/api/paas/v4",
        key_env=("ZAI_API_KEY", "Z_AI_API_KEY", "GLM_API_KEY"),
        docs_url="https://docs.z.ai/api-reference/llm/chat-completion",
        # GLM keeps earlier reasoning when sent back (thinking.clear_thinking=false,
        # corpus zai-thinking-stream); optional, not required
        reasoning_echo="reasoning_content", reasoning_request="thinking_flag",
    ),
    _row(
        name="zhipu", base_url="https://open.bigmodel.cn/api/paas/v4",
        key_env=("ZHIPUAI_API_KEY",), issuer="zai",
        docs_url="https://docs.bigmodel.cn/api-reference",
        reasoning_echo="reasoning_content", reasoning_request="thinking_flag",
    ),
    _row(
        name="minimax", base_url="https://api.minimax.io/anthropic",
        api_mode="anthropic_messages",
        # MiniMax's Anthropic endpoint authenticates with Bearer, not x-api-key
        auth_style="bearer", key_env=("MINIMAX_API_KEY",),
        docs_url="https://platform.minimax.io/docs/api-reference/text-anthropic-api",
        anthropic_version="2023-06-01",
        # per-tool eager_input_streaming is not implemented there (issue 4 seed quirk)
        fine_grained_tool_streaming=False,
        vision=False,  # "supports text and tool calls, not image or document input"
        unique_tool_names=True, tool_id_format="anthropic",
        # MiniMax-M2.x: "max output of 131.1K tokens"; the seed's table says 131,072:
        # https://vercel.com/ai-gateway/models/minimax/minimax-m2.7-highspeed (checked 2026-12-01)
        max_output=131_072,
    ),
    _row(
        # the same endpoint for mainland China (its own keys):
        # https://platform.minimaxi.com/docs/api-reference/text-anthropic-api (checked 2026-12-01)
        name="minimax-cn", base_url="https://api.minimaxi.com/anthropic",
        api_mode="anthropic_messages", auth_style="bearer", key_env=("MINIMAX_CN_API_KEY",),
        issuer="minimax", docs_url="https://platform.minimaxi.com/docs/api-reference/text-anthropic-api",
        anthropic_version="2023-06-01", fine_grained_tool_streaming=False, vision=False,
        unique_tool_names=True, tool_id_format="anthropic", max_output=131_072,
    ),
    _row(
        name="xiaomi", base_url="https://api.xiaomimimo.com/v1", key_env=("XIAOMI_API_KEY",),
        docs_url="https://platform.xiaomimimo.com/docs",
        # MiMo requires reasoning_content back on tool-call turns (peer-lessons 9)
        reasoning_echo="required",
        # images in tool messages: 400 "text is not set" (hermes-behaviours 2.4)
        vision_in_tool_results=False,
        unique_tool_names=True,
    ),
    # ---------------------------------------------------------------- hosts of open models
    _row(
        name="groq", base_url="https://api.groq.com/openai/v1", key_env=("GROQ_API_KEY",),
        docs_url="https://console.groq.com/docs/openai",
        # strict: rejects reasoning_content in assistant messages ("property ... is
        # unsupported"); gpt-oss / qwen3 take reasoning_effort
        reasoning_echo="none", reasoning_request="reasoning_effort",
    ),
    _row(
        name="together", base_url="https://api.together.xyz/v1", key_env=("TOGETHER_API_KEY",),
        docs_url="https://docs.together.ai/docs/openai-api-compatibility",
        embeddings=_TOGETHER_EMBED,
    ),
    _row(
        name="fireworks", base_url="https://api.fireworks.ai/inference/v1",
        key_env=("FIREWORKS_API_KEY",),
        docs_url="https://docs.fireworks.ai/tools-sdks/openai-compatibility",
        reasoning_request="reasoning_effort",
        embeddings=_FIREWORKS_EMBED,
    ),
    _row(
        name="mistral", base_url="https://api.mistral.ai/v1", key_env=("MISTRAL_API_KEY",),
        docs_url="https://docs.mistral.ai/api/",
        # Mistral validates bodies strictly (422 extra_forbidden "Extra inputs are not
        # permitted"): reasoning_content on assistant turns (crush#1590, OpenMinis#87),
        # stream_options (anon-kode#53; usage comes anyway) and max_completion_tokens
        # (eca#231) are all rejected
        reasoning_echo="none", stream_usage=False,
        # ids must be exactly 9 [a-zA-Z0-9] (peer-lessons 16); "any" is its own
        # spelling of required (corpus: mistral tool_choice "any")
        tool_id_format="mistral9",
        tool_choice_values=frozenset({"auto", "none", "any", "required", "function"}),
        embeddings=_MISTRAL_EMBED,
    ),
    _row(
        GeminiProfile, name="gemini",
        base_url="https://generativelanguage.googleapis.com/v1beta/openai",
        key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        docs_url="https://ai.google.dev/gemini-api/docs/openai",
        reasoning_request="reasoning_effort",
        # The corpus has only tool_choice "auto" for this endpoint, and gemini-2.5 on
        # it was reported to reject "required" (agentscope#1226, peer-lessons 18):
        # not declared until a recorded exchange shows it accepted.
        tool_choice_values=_NO_REQUIRED,
        embeddings=_GEMINI_EMBED,
    ),
    _row(
        XAIProfile, name="xai", base_url="https://api.x.ai/v1", api_mode="responses",
        key_env=("XAI_API_KEY",), docs_url="https://docs.x.ai/docs/api-reference",
        reasoning_request="reasoning_effort",
    ),
    _row(
        name="perplexity", base_url="https://api.perplexity.ai",
        key_env=("PERPLEXITY_API_KEY", "PPLX_API_KEY"),
        docs_url="https://docs.perplexity.ai/api-reference/chat-completions-post",
    ),
    _row(
        name="cerebras", base_url="https://api.cerebras.ai/v1", key_env=("CEREBRAS_API_KEY",),
        docs_url="https://inference-docs.cerebras.ai/resources/openai",
        # strict schema: reasoning_content on assistant turns is a 400
        reasoning_echo="none", reasoning_request="reasoning_effort", vision=False,
    ),
    _row(
        name="sambanova", base_url="https://api.sambanova.ai/v1",
        key_env=("SAMBANOVA_API_KEY",),
        docs_url="https://docs.sambanova.ai/cloud/docs/capabilities/openai-compatibility",
        reasoning_echo="none",  # rejects unknown message fields such as reasoning_content
    ),
    _row(
        name="deepinfra", base_url="https://api.deepinfra.com/v1/openai",
        key_env=("DEEPINFRA_API_KEY", "DEEPINFRA_TOKEN"),
        docs_url="https://deepinfra.com/docs/openai_api",
        embeddings=_DEEPINFRA_EMBED,
    ),
    _row(
        name="novita", base_url="https://api.novita.ai/openai/v1", key_env=("NOVITA_API_KEY",),
        docs_url="https://novita.ai/docs/guides/llm-api",
    ),
    _row(
        # international endpoint; mainland China is https://api.siliconflow.cn/v1
        name="siliconflow", base_url="https://api.siliconflow.com/v1",
        key_env=("SILICONFLOW_API_KEY",), docs_url="https://docs.siliconflow.com",
        reasoning_request="enable_thinking",
    ),
    _row(
        # Ark is regional (cn-beijing here); ``model`` may be a model id or an
        # inference endpoint id ("ep-..."), both pass through unchanged
        name="volcengine", base_url="https://ark.cn-beijing.volces.com/api/v3",
        key_env=("ARK_API_KEY",),
        docs_url="https://www.volcengine.com/docs/82379/1330310",
        reasoning_request="thinking_flag",  # Doubao seed: thinking {type: enabled|disabled}
    ),
    _row(
        # the same Ark runtime for BytePlus (outside China), its own keys and model ids
        name="byteplus", base_url="https://ark.ap-southeast.bytepluses.com/api/v3",
        key_env=("ARK_API_KEY",), issuer="byteplus",  # the Ark SDK reads it for both
        docs_url="https://docs.byteplus.com/en/docs/ModelArk",
        reasoning_request="thinking_flag",
    ),
    _row(
        name="qianfan", base_url="https://qianfan.baidubce.com/v2", key_env=("QIANFAN_API_KEY",),
        docs_url="https://cloud.baidu.com/doc/qianfan-api/s/3m7of64lb",
    ),
    _row(
        # international; mainland China is https://api.stepfun.com/v1
        name="stepfun", base_url="https://api.stepfun.ai/v1", key_env=("STEPFUN_API_KEY",),
        docs_url="https://platform.stepfun.ai/docs",
    ),
    _row(
        AzureOpenAIProfile, name="azure", base_url=AZURE_TEMPLATE,
        auth_style="api-key", key_env=("AZURE_OPENAI_API_KEY",), issuer="azure-openai",
        docs_url="https://learn.microsoft.com/en-us/azure/ai-foundry/openai/api-version-lifecycle",
        max_tokens_field="max_completion_tokens",  # the OpenAI models' rule holds here
        reasoning_request="reasoning_effort", developer_role=True, no_stop_models=_OPENAI_NO_STOP,
        tool_choice_values=_OPENAI_CHOICES,
        embeddings=_AZURE_EMBED,
    ),
    _row(
        name="nous", base_url="https://inference-api.nousresearch.com/v1",
        key_env=("NOUS_API_KEY",), docs_url="https://portal.nousresearch.com/api-docs",
        reasoning_request="openrouter",  # takes OpenRouter's {"reasoning": {...}} shape
    ),
    _row(
        name="huggingface", base_url="https://router.huggingface.co/v1",
        key_env=("HF_TOKEN", "HUGGINGFACE_API_KEY"),
        docs_url="https://huggingface.co/docs/inference-providers",
    ),
    _row(
        name="nvidia", base_url="https://integrate.api.nvidia.com/v1",
        key_env=("NVIDIA_API_KEY",), docs_url="https://docs.api.nvidia.com/nim/reference",
        embeddings=_NVIDIA_EMBED,
    ),
    _row(
        name="github", base_url="https://models.github.ai/inference",
        key_env=("GITHUB_TOKEN",),  # a token with the models:read permission
        docs_url="https://docs.github.com/en/rest/models/inference",
    ),
    # ---------------------------------------------------------------- local servers
    # 127.0.0.1 rather than localhost: localhost may resolve to ::1 first while
    # these servers listen on IPv4 by default (a connect error, not a slow one).
    _row(
        name="ollama", base_url="http://127.0.0.1:11434/v1", key_env=("OLLAMA_API_KEY",),
        docs_url="https://docs.ollama.com/api/openai-compatibility",
        local=True, reasoning_request="reasoning_effort",
        embeddings=_OLLAMA_EMBED,
    ),
    _row(
        name="lmstudio", base_url="http://127.0.0.1:1234/v1",
        docs_url="https://lmstudio.ai/docs/app/api/endpoints/openai",
        # no key by default; with "require authentication" on, pass api_key (Bearer)
        local=True, reasoning_request="reasoning_effort",
        embeddings=_LMSTUDIO_EMBED,
    ),
    _row(
        name="vllm", base_url="http://127.0.0.1:8000/v1", key_env=("VLLM_API_KEY",),
        docs_url="https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html",
        local=True, reasoning_request="reasoning_effort",
        embeddings=_VLLM_EMBED,
    ),
    _row(
        name="llamacpp", base_url="http://127.0.0.1:8080/v1", key_env=("LLAMA_API_KEY",),
        docs_url="https://github.com/ggml-org/llama.cpp/tree/master/tools/server",
        # llama-server hands reasoning_content to the chat template (gpt-oss needs its
        # analysis back on tool turns); recorded in the corpus (llama-cpp-gpt-oss_t1)
        reasoning_echo="reasoning_content", local=True,
        embeddings=_LLAMACPP_EMBED,
    ),
    # ---------------------------------------------------------------- Responses API
    # No row for ChatGPT's Codex backend (chatgpt.com/backend-api/codex): it takes
    # ChatGPT-plan tokens, which modelwire does not log in for, and modelwire never reads
    # another program's credential files (~/.codex/auth.json). Codex models (gpt-5-codex,
    # gpt-5.1-codex-max...) are served by the API: openai-responses with an OpenAI key;
    # the Codex quirks that hold there are the model rules the Responses codec applies
    # (developer role, xhigh effort on codex-max), not the backend's (stream only, no
    # max_output_tokens, nothing stored). The alias "codex" names that row.
    # The same providers over the Responses API (reasoning items with encrypted_content
    # round-trip there; corpus: openai and azure_openai /responses exchanges).
    # resolve("openai/gpt-5", api_mode="responses") picks these rows (VARIANTS below).
    _row(
        name="openai-responses", raw_passthrough=True, base_url="https://api.openai.com/v1", api_mode="responses",
        key_env=("OPENAI_API_KEY",), issuer="openai",
        docs_url="https://platform.openai.com/docs/api-reference/responses",
        reasoning_request="reasoning_effort", developer_role=True, vision_in_tool_results=True,
        embeddings=_OPENAI_EMBED,
    ),
    _row(
        AzureOpenAIProfile, name="azure-responses", base_url=AZURE_TEMPLATE,
        api_mode="responses", auth_style="api-key", key_env=("AZURE_OPENAI_API_KEY",),
        issuer="azure-openai",
        docs_url="https://learn.microsoft.com/en-us/azure/ai-foundry/openai/how-to/responses",
        reasoning_request="reasoning_effort", developer_role=True, vision_in_tool_results=True,
        embeddings=_AZURE_EMBED,
    ),
    # ---------------------------------------------------------------- filled at run time
    # a custom endpoint speaks its declared protocol as its clients send it
    _row(name="custom", raw_passthrough=True,
         embeddings=_CUSTOM_EMBED),
    # the emulator's Chat Completions door takes OpenAI's reasoning_effort and, like
    # DeepSeek, answers with reasoning_content that it accepts back
    _row(name="emulator", raw_passthrough=True, local=True, emulated=True, issuer="emulator", reasoning_request="reasoning_effort",
         reasoning_echo="reasoning_content",
         embeddings=_EMULATOR_EMBED),
    _row(name="emulator-anthropic", raw_passthrough=True, api_mode="anthropic_messages", auth_style="x-api-key",
         anthropic_version="2023-06-01", local=True, emulated=True, issuer="emulator",
         tool_id_format="anthropic", vision_in_tool_results=True, counts_tokens=True,
         mid_conversation_system=True),
    _row(name="emulator-responses", raw_passthrough=True, api_mode="responses", local=True, emulated=True, issuer="emulator",
         vision_in_tool_results=True,
         embeddings=_EMULATOR_EMBED),
]

CATALOG: dict[str, ProviderProfile] = {p.name: p for p in _ROWS}

# Rows with no fixed base URL (see the module docstring).
RUNTIME_BASE_URL = frozenset({"custom", "emulator", "emulator-anthropic", "emulator-responses"})

# provider -> {api_mode: the row serving that protocol}: resolve(..., api_mode=...)
# and config entries with api_mode switch rows through this table.
VARIANTS: dict[str, dict[str, str]] = {
    "deepseek": {"anthropic_messages": "deepseek-anthropic"},
    "deepseek-anthropic": {"chat_completions": "deepseek"},
    "moonshot": {"anthropic_messages": "moonshot-anthropic"},
    "moonshot-anthropic": {"chat_completions": "moonshot"},
    "openai": {"responses": "openai-responses"},
    "openai-responses": {"chat_completions": "openai"},
    "azure": {"responses": "azure-responses"},
    "azure-responses": {"chat_completions": "azure"},
    **{e: {"chat_completions": "emulator", "anthropic_messages": "emulator-anthropic",
           "responses": "emulator-responses"}
       for e in ("emulator", "emulator-anthropic", "emulator-responses")},
}


def variant(provider: str, api_mode: str) -> str | None:
    """The row that serves ``provider`` over ``api_mode`` (itself, a variant, or None)."""
    profile = CATALOG.get(provider)
    if profile is not None and profile.api_mode == api_mode:
        return provider
    return VARIANTS.get(provider, {}).get(api_mode)


# Other names people use for the same rows.
ALIASES: dict[str, str] = {
    "claude": "anthropic", "kimi": "moonshot", "kimi-cn": "moonshot-cn",
    "qwen": "dashscope", "alibaba": "dashscope", "glm": "zai", "z-ai": "zai", "z.ai": "zai",
    "mimo": "xiaomi", "google": "gemini", "grok": "xai", "x-ai": "xai", "pplx": "perplexity",
    "ark": "volcengine", "doubao": "volcengine", "baidu": "qianfan", "step": "stepfun",
    "azure-openai": "azure", "nous-portal": "nous", "hf": "huggingface", "nim": "nvidia",
    "github-models": "github", "lm-studio": "lmstudio", "llama.cpp": "llamacpp",
    "llama-cpp": "llamacpp", "codex": "openai-responses", "or": "openrouter",
}
