"""The deterministic model under a coding agent: few fitting calls, valid arguments, and
an answer once the results are back."""

from __future__ import annotations

import json

import anthropic
import jsonschema
import pytest

from modelwire.demo_tools import calculator, clock
from modelwire.emulator.model import PlannedCall, Prompt, ToolDef, Turn, respond

KEY = "sk-emulator-test-key-0001"

# a coding agent's tool set in the shape Claude Code sends (names, schema shapes, a
# one-line summary then pages of notes), with our own placeholder text
_NOTES = ("\n\nUsage notes:\n- This tool can read a file, write a file, search the "
          "codebase, run a command, list a directory or fetch a URL when asked.\n"
          "- Prefer the dedicated tools for files; say so to the user when unsure.\n") * 3


def _tool(name: str, summary: str, properties: dict, required: list[str]) -> ToolDef:
    return ToolDef(name, summary + _NOTES, {
        "type": "object", "properties": properties, "required": required,
        "additionalProperties": False, "$schema": "http://json-schema.org/draft-07/schema#"})


_S = {"type": "string"}
CODING_TOOLS = (
    _tool("Task", "Launch a new agent to handle complex, multi-step tasks autonomously.",
          {"description": _S, "prompt": _S, "subagent_type": _S},
          ["description", "prompt", "subagent_type"]),
    _tool("Bash", "Executes a given bash command in a persistent shell session.",
          {"command": _S, "timeout": {"type": "number", "maximum": 600000},
           "description": _S, "run_in_background": {"type": "boolean"}}, ["command"]),
    _tool("Glob", "Fast file pattern matching tool that works with any codebase size.",
          {"pattern": _S, "path": _S}, ["pattern"]),
    _tool("Grep", "A powerful search tool built on ripgrep.",
          {"pattern": _S, "path": _S, "glob": _S,
           "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
           "-i": {"type": "boolean"}, "head_limit": {"type": "number"}}, ["pattern"]),
    _tool("ExitPlanMode", "Use this tool when you are in plan mode and have finished planning.",
          {"plan": _S}, ["plan"]),
    _tool("Read", "Reads a file from the local filesystem.",
          {"file_path": _S, "offset": {"type": "number"}, "limit": {"type": "number"}},
          ["file_path"]),
    _tool("Edit", "Performs exact string replacements in files.",
          {"file_path": _S, "old_string": _S, "new_string": _S,
           "replace_all": {"type": "boolean", "default": False}},
          ["file_path", "old_string", "new_string"]),
    _tool("Write", "Writes a file to the local filesystem.",
          {"file_path": _S, "content": _S}, ["file_path", "content"]),
    _tool("NotebookEdit", "Completely replaces the contents of a cell in a Jupyter notebook file.",
          {"notebook_path": _S, "new_source": _S,
           "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"]}},
          ["notebook_path", "new_source"]),
    _tool("WebFetch", "Fetches content from a specified URL and processes it.",
          {"url": {"type": "string", "format": "uri"}, "prompt": _S}, ["url", "prompt"]),
    _tool("TodoWrite", "Use this tool to create and manage a structured task list.",
          {"todos": {"type": "array", "items": {"type": "object", "properties": {
              "content": {"type": "string", "minLength": 1},
              "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
              "activeForm": {"type": "string", "minLength": 1}},
              "required": ["content", "status", "activeForm"], "additionalProperties": False}}},
          ["todos"]),
    _tool("WebSearch", "Allows Claude to search the web and use the results.",
          {"query": {"type": "string", "minLength": 2},
           "allowed_domains": {"type": "array", "items": _S}}, ["query"]),
    _tool("BashOutput", "Retrieves output from a running or completed background bash shell.",
          {"bash_id": _S, "filter": _S}, ["bash_id"]),
    _tool("KillShell", "Kills a running background bash shell by its ID.",
          {"shell_id": _S}, ["shell_id"]),
    _tool("SlashCommand", "Execute a slash command within the main conversation.",
          {"command": _S}, ["command"]),
    _tool("CronList", "Shows every scheduled job, durable (.cache/jobs.json) or session-only.",
          {}, []),
    _tool("EnterWorktree", "Only when asked to work in a worktree of the project / repo.",
          {"name": _S}, []),
)

REMINDER = ("<system-reminder>\nThe user may ask you to run Bash, Read a file, Glob, Grep, "
            "fetch a URL or write a todo list. Search before you edit.\n</system-reminder>\n")
CLOCK = ToolDef(clock.name, clock.description, clock.parameters)
CALC = ToolDef(calculator.name, calculator.description, calculator.parameters)
SHELL = ToolDef("shell", "Runs a shell command and returns its output.", {
    "type": "object", "required": ["command"], "additionalProperties": False, "properties": {
        "command": {"type": "array", "items": {"type": "string"}},
        "workdir": {"type": "string"}, "timeout_ms": {"type": "number"}}})
UPDATE_PLAN = ToolDef("update_plan", "Updates the task plan.", {
    "type": "object", "required": ["plan"], "properties": {"explanation": {"type": "string"},
        "plan": {"type": "array", "items": {"type": "object", "required": ["step", "status"],
                 "properties": {"step": {"type": "string"},
                                "status": {"enum": ["pending", "in_progress", "completed"]}}}}}})


MCP_LIST = ToolDef("list_mcp_resources", "Lists resources provided by MCP servers.",
                   {"type": "object", "properties": {"server": {"type": "string"}}})
MCP_READ = ToolDef("read_mcp_resource", "Read a specific resource from an MCP server.", {
    "type": "object", "required": ["server", "uri"],
    "properties": {"server": {"type": "string"}, "uri": {"type": "string"}}})
PATCH = ToolDef("apply_patch", "Use the apply_patch tool to edit files.", {
    "type": "object", "required": ["input"], "properties": {"input": {"type": "string"}}})
CODEX_TOOLS = (SHELL, UPDATE_PLAN, PATCH, MCP_LIST, MCP_READ)


def ask(text, tools, **kw):
    return respond(Prompt((Turn("user", REMINDER + text),), tuple(tools), **kw))


def calls(reply):
    return [(c.name, json.loads(c.arguments)) for c in reply.calls]


def assert_valid(reply, tools):
    schemas = {t.name: t.parameters for t in tools}
    for call in reply.calls:
        jsonschema.validate(json.loads(call.arguments), schemas[call.name])


@pytest.mark.parametrize(("text", "expected"), [
    ("list the files", [("Glob", {"pattern": "**/*"})]),
    ("find the files named *.py in src/", [("Glob", {"pattern": "*.py", "path": "src/"})]),
    ("read README.md", [("Read", {"file_path": "README.md"})]),
    ("run `make test`", [("Bash", {"command": "make test"})]),
    ("grep for main in src/app.py", [("Grep", {"pattern": "main", "path": "src/app.py"})]),
    ("fetch https://example.com/docs", [("WebFetch", {"url": "https://example.com/docs",
                                                      "prompt": "Fetch"})]),
    ("search the web for rust news", [("WebSearch", {"query": "Search web rust news"})]),
    ("make a todo list for the release", [("TodoWrite", {"todos": [
        {"content": "Todo list release", "status": "pending",
         "activeForm": "Todo list release"}]})]),
    ("say hi", []),
    ("What is 17 x 23?", []),  # no "/" or "-" of a description counts as arithmetic
    ("what does this project do?", []),  # one word of one description: chance
], ids=["list", "glob", "read", "run", "grep", "fetch", "web-search", "todo", "say-hi", "math",
        "one-description-word"])
def test_a_coding_agents_tool_set_gets_the_one_fitting_call(text, expected):
    reply = ask(text, CODING_TOOLS)
    assert calls(reply) == expected
    assert_valid(reply, CODING_TOOLS)
    if not expected:
        assert reply.finish == "stop" and reply.text


def test_arithmetic_without_a_calculator_is_answered_in_text():
    assert ask("What is 17 x 23?", CODING_TOOLS).text == "17 * 23 = 391. The answer is 391."


def test_codex_shaped_tools_get_an_argv_and_a_plan():
    run = ask("run `git status -s`", [SHELL, UPDATE_PLAN])
    assert calls(run) == [("shell", {"command": ["git", "status", "-s"]})]
    listing = ask("list the files", [SHELL, UPDATE_PLAN])
    assert calls(listing) == [("shell", {"command": ["ls"]})]
    plan = ask("update the plan for the refactor", [SHELL, UPDATE_PLAN])
    assert calls(plan) == [("update_plan", {"plan": [{"step": "Update plan refactor",
                                                      "status": "pending"}]})]
    for reply in (run, listing, plan):
        assert_valid(reply, [SHELL, UPDATE_PLAN])


@pytest.mark.parametrize(("text", "expected"), [
    ("list the files", [("shell", {"command": ["ls"]})]),
    ("read README.md", [("shell", {"command": ["cat", "README.md"]})]),
    ("grep for main in src/app.py", [("shell", {"command": ["grep", "-rn", "main", "src/app.py"]})]),
    ("list the MCP resources", [("list_mcp_resources", {})]),
    ("fix the failing test", [("apply_patch", {"input": "Fix failing test"})]),
], ids=["list", "read", "grep", "mcp", "patch"])
def test_a_verb_alone_does_not_pick_a_tool_for_something_else(text, expected):
    """``list_mcp_resources`` has "list" in its name, but "list the files" is not about
    MCP resources: the shell lists them; "apply_patch ... edit files" is one shared
    description word beside a name match, which is chance."""
    reply = ask(text, CODEX_TOOLS)
    assert calls(reply) == expected
    assert_valid(reply, CODEX_TOOLS)


def test_a_synonym_stands_in_when_no_name_has_the_word():
    task_list = ToolDef("TaskList", "Lists the session's tasks.", {"type": "object", "properties": {}})
    task_get = ToolDef("TaskGet", "One task by its id.", {
        "type": "object", "required": ["taskId"], "properties": {"taskId": {"type": "string"}}})
    assert calls(ask("show my todo list", [task_get, task_list, SHELL])) == [("TaskList", {})]
    todo = ToolDef("TodoWrite", "Writes the todo list.", {"type": "object", "properties": {}})
    assert [c.name for c in ask("show my todo list", [task_list, todo]).calls] == ["TodoWrite"]


def test_a_command_string_is_made_for_the_request_and_a_shell_field_is_left_alone():
    exec_command = ToolDef("exec_command", "Runs a command in a terminal.", {
        "type": "object", "required": ["cmd"], "properties": {
            "cmd": {"type": "string"}, "shell": {"type": "string"}, "workdir": {"type": "string"},
            "yield_time_ms": {"type": "number"}}})
    assert calls(ask("read README.md", [exec_command])) == [("exec_command", {"cmd": "cat README.md"})]
    assert calls(ask("list the files in src/", [exec_command])) == [
        ("exec_command", {"cmd": "ls src/", "workdir": "src/"})]


def test_destructive_tools_and_file_names_need_their_own_words():
    assert calls(ask("run ls in the shell", CODING_TOOLS)) == [("Bash", {"command": "ls"})]
    assert [c.name for c in ask("kill the shell", CODING_TOOLS).calls] == ["KillShell"]
    assert ask("describe cat.png", CODING_TOOLS).calls == ()  # a file name, not the verb cat


def test_a_string_the_request_does_not_name_is_plausible_not_the_question():
    (call,) = ask("What time is it on the clock?", [CLOCK, CALC]).calls
    assert (call.name, json.loads(call.arguments)) == ("clock", {})  # optional: left out
    required = ToolDef("clock", "Get the current time", {
        "type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]})
    assert calls(ask("What time is it?", [required])) == [("clock", {"timezone": "UTC"})]


def test_a_named_value_is_used_and_every_fitting_tool_is_called():
    weather = ToolDef("get_weather", "Current weather for a city", {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
    reply = ask("What's the weather in Paris, and 17 times 23?", [CLOCK, weather, CALC])
    assert calls(reply) == [("get_weather", {"city": "Paris"}),
                            ("calculator", {"expression": "17 * 23"})]
    both = ask("What's the weather in Paris and the current time?", [weather, CLOCK])
    assert [c.name for c in both.calls] == ["get_weather", "clock"]  # clock: its description


def test_each_call_takes_its_values_from_the_clause_that_asks_for_it():
    weather = ToolDef("get_weather", "Current weather for a city", {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
    zoned = ToolDef("clock", "Get the current time", {
        "type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]})
    reply = ask("What's the weather in Paris, and the current time in Asia/Tokyo?", [weather, zoned])
    assert calls(reply) == [("get_weather", {"city": "Paris"}),
                            ("clock", {"timezone": "Asia/Tokyo"})]
    city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    shared = ask("What is the weather and the time in Paris?",
                 [ToolDef("get_weather", "the weather in a city", city),
                  ToolDef("get_time", "the time in a city", city)])
    # a required value its own clause lacks comes from the rest of the request
    assert calls(shared) == [("get_weather", {"city": "Paris"}), ("get_time", {"city": "Paris"})]
    both = ask("list the files and read README.md", CODING_TOOLS)  # two clauses, two verbs
    assert calls(both) == [("Glob", {"pattern": "**/*"}), ("Read", {"file_path": "README.md"})]


def test_after_the_results_it_answers_even_with_a_reminder_after_them():
    first = ask("list the files", CODING_TOOLS)
    (call,) = first.calls
    done = PlannedCall(call.name, call.arguments, "toolu_1")
    turns = (Turn("user", REMINDER + "list the files"), Turn("assistant", calls=(done,)),
             Turn("tool", "README.md\nsrc/app.py", call_id="toolu_1"),
             Turn("user", "<system-reminder>\nThe todo list is empty.\n</system-reminder>"))
    reply = respond(Prompt(turns, CODING_TOOLS))
    assert reply.calls == () and reply.finish == "stop"
    assert reply.text == "Based on the tool results: Glob returned README.md src/app.py."


def test_a_new_request_after_the_results_is_answered_afresh():
    done = PlannedCall("Read", '{"file_path": "README.md"}', "toolu_1")
    turns = (Turn("user", "read README.md"), Turn("assistant", calls=(done,)),
             Turn("tool", "# modelwire", call_id="toolu_1"), Turn("assistant", "It is a title."),
             Turn("user", "now list the files"))
    assert calls(respond(Prompt(turns, CODING_TOOLS))) == [("Glob", {"pattern": "**/*"})]


def test_claude_code_shaped_conversation_ends_after_one_round(emu):
    """Anthropic SDK, adaptive thinking, the coding tool set, reminders in the turn: one
    thinking + tool_use, then a text answer quoting the result and no further call."""
    client = anthropic.Anthropic(base_url=emu.anthropic_base_url(), api_key=KEY)
    tools = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
             for t in CODING_TOOLS]
    messages = [{"role": "user", "content": [{"type": "text", "text": REMINDER},
                                             {"type": "text", "text": "list the files"}]}]
    ask_model = {"model": "claude-opus-4-7", "max_tokens": 4000, "tools": tools,
                 "thinking": {"type": "adaptive"}}
    first = client.messages.create(messages=messages, **ask_model)
    assert [b.type for b in first.content] == ["thinking", "tool_use"]
    use = first.content[1]
    assert (use.name, use.input) == ("Glob", {"pattern": "**/*"})
    messages += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use.id, "content": "README.md"},
            {"type": "text", "text": "<system-reminder>Keep going.</system-reminder>"}]}]
    second = client.messages.create(messages=messages, **ask_model)
    assert second.stop_reason == "end_turn"
    assert [b.type for b in second.content] == ["thinking", "text"]
    assert second.content[-1].text == "Based on the tool results: Glob returned README.md."
