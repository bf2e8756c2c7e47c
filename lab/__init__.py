"""The lab: options of the memory code that were measured and not adopted, and the tools that
measure the course on public chats. The benchmarks and tests import it; no lesson and no module of
``helpers`` does (what each row measured: docs/design-notes.md)."""
