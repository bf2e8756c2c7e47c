"""Course plumbing, not memory code: the offline stand-in chat model, the embedder, Milvus connections,
the lesson-03 race demo, and the widgets, tables and checks the lessons show."""
