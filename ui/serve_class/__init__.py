"""Serve the class (issue 56): each student's own request through the class's one engine (``serve.engine_service``),
streamed live in the browser; the batch, the blocks and every request's timeline drawn from the engine's pulse."""
