"""A coding agent's tool set in the shape Claude Code and Codex send (names, schema
shapes, a one-line summary then pages of usage notes), with our own placeholder text."""

from __future__ import annotations

from modelwire.emulator.model import ToolDef

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
)
