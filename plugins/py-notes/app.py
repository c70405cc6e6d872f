"""py-notes: a small notebook served through every primitive of the Python SDK.

Tools (structured output, tool errors, progress, logs, configuration, questions to
the client), a prompt, a resource and a resource template. It behaves exactly like
plugins/ts-notes, so that one end-to-end test checks both SDKs.
"""

from dataclasses import dataclass
from typing import Annotated, Literal, Optional

from wharf_sdk import (Plugin, Range, PromptError, ResourceError, ToolError, ToolResult, ask, config, embedded_resource,
                       info, progress, resource_link, user)


@dataclass
class Note:
    id: str
    title: str
    tags: list[str]
    body: str


NOTES = [
    Note("groceries", "Groceries", ["home"], "Milk, eggs, bread and coffee."),
    Note("wharf-ideas", "Wharf ideas", ["work", "wasm"], "Plugins in TypeScript and Python, with every MCP primitive."),
    Note("reading", "Reading list", ["home", "books"], "The Rust book, then a book on WebAssembly."),
]


def note_uri(note_id: str) -> str:
    return f"notes://note/{note_id}"


def find(note_id: str) -> Optional[Note]:
    return next((note for note in NOTES if note.id == note_id), None)


def markdown(note: Note) -> str:
    return f"# {note.title}\n\n{note.body}\n\nTags: {', '.join(note.tags)}\n"


plugin = Plugin()


@dataclass
class Hit:
    """A matching note.

    Attributes:
        id: The note's id.
        title: The note's title.
        score: How many of the query's words it mentions.
    """

    id: str
    title: str
    score: int


@dataclass
class SearchResult:
    """The search's hits.

    Attributes:
        hits: The matching notes, best first.
    """

    hits: list[Hit]


@plugin.tool(title="Search notes", read_only=True)
def search(query: str, limit: Annotated[int, Range(1, 20)] = 5) -> SearchResult:
    """Finds the notes that mention the words of a query, best first.

    Args:
        query: Words to look for in titles, bodies and tags.
        limit: At most this many hits.
    """
    words = query.lower().split()
    if not words:
        return ToolResult.error("The query is empty: give at least one word.")
    hits = []
    for note in NOTES:
        haystack = f"{note.title} {note.body} {' '.join(note.tags)}".lower()
        score = sum(1 for word in words if word in haystack)
        if score > 0:
            hits.append(Hit(note.id, note.title, score))
    hits.sort(key=lambda hit: (-hit.score, hit.id))
    return SearchResult(hits[:limit])


@plugin.tool(read_only=True)
def get(id: str) -> ToolResult:
    """Shows one note, with a link to it as a resource.

    Args:
        id: The note's id, such as `groceries`.
    """
    note = find(id)
    if note is None:
        return ToolResult.error(f'No note with id "{id}".')
    return ToolResult.text(markdown(note)).with_(
        resource_link(note_uri(id), id, title=note.title, mime_type="text/markdown"))


@plugin.tool(idempotent=True)
def reindex() -> str:
    """Rebuilds the notebook's index, reporting progress note by note."""
    if config("index") == "off":
        raise ToolError.failed("indexing is turned off (configuration `index`)")
    for i, note in enumerate(NOTES):
        progress(i + 1, len(NOTES), f"indexed {note.id}")
        info(f"indexed {note.id}")
    return f"Indexed {len(NOTES)} notes in {config('notebook', 'Notes')}."


@dataclass
class Details:
    """The new note's details.

    Attributes:
        title: The note's title.
        tag: Where the note belongs.
    """

    title: str
    tag: Literal["home", "work", "books"]


@plugin.tool
def draft(topic: str) -> str:
    """Drafts a new note: asks the user for a title and a tag, then the client's model for the text.

    Args:
        topic: What the note is about.
    """
    details = ask.elicit("details", f"A note about {topic}: its title and tag?", Details)
    if details.action == "decline":
        return "Draft declined."
    if details.action == "cancel":
        return "Draft cancelled."
    body = ask.sample_text("body", f'Write a two-sentence note titled "{details.content.title}" about {topic}.', 200)
    return f"# {details.content.title} [{details.content.tag}]\n\n{body}"


@plugin.tool(read_only=True)
def roots() -> str:
    """Lists the folders the client shares (its roots)."""
    found = ask.list_roots("roots")
    if not found:
        return "No roots."
    return "\n".join(f"{r['name']}: {r['uri']}" if r.get("name") else r["uri"] for r in found)


@plugin.prompt(title="Review a note", complete={"id": [note.id for note in NOTES]})
def review(id: str, focus: Optional[str] = None) -> dict:
    """Asks the model to review one note.

    Args:
        id: The note to review.
        focus: What to pay attention to (optional).
    """
    note = find(id)
    if note is None:
        raise PromptError.invalid_arguments(f'no note with id "{id}"')
    return {
        "description": f"Review of {note.title}",
        "messages": [
            user(embedded_resource(note_uri(id), mime_type="text/markdown", text=markdown(note))),
            user(f"Review the note above{f', focusing on {focus}' if focus else ''}."),
        ],
    }


@plugin.resource("notes://index", name="index", title="All notes", mime_type="text/markdown")
def index() -> str:
    """The list of notes, with links."""
    return "# Notes\n\n" + "".join(f"- [{note.title}]({note_uri(note.id)})\n" for note in NOTES)


@plugin.resource_template("notes://note/{id}", name="note", title="A note", mime_type="text/markdown",
                          complete={"id": [note.id for note in NOTES]})
def note(id: str, uri: str) -> str:
    """One note, as Markdown."""
    found = find(id)
    if found is None:
        raise ResourceError.not_found(uri)
    return markdown(found)


Tools, Prompts, Resources = plugin.exports()
