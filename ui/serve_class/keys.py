"""Serve the class: this session's keys (their owner: ``ui.serve_class``) and their defaults."""

SERVE_PROMPT = "serve.prompt"  # the student's prompt box
SERVE_NEW_TOKENS = "serve.new_tokens"  # the new-tokens slider
SERVE_SEND = "serve.send"  # the Send the browser has to make: {nonce, text, new_tokens} (None: none yet)
SERVE_POST = "serve.post"  # another POST for the browser: {nonce, action, body}
SERVE_FINISHED = "serve.finished"  # the last request's end as the browser reported it
SERVE_STATE = "serve.state"  # the room's latest state from the engine's pulse
SERVE_SIMULATE = "serve.simulate"  # simulated classmates to add
SERVE_RESTARTED = "serve.restarted"  # the engine's epoch changed under this session
SERVE_STREAM = "serve.stream"  # the stream component's key
SERVE_PULSE = "serve.pulse"  # the pulse component's key
SERVE_TIMELINE = "serve.timeline"  # the requests' timeline chart

DEFAULTS = {
    SERVE_PROMPT: "The cat sat on the",
    SERVE_NEW_TOKENS: 24,
    SERVE_SEND: None,
    SERVE_POST: None,
    SERVE_FINISHED: None,
    SERVE_STATE: None,
    SERVE_SIMULATE: 4,
    SERVE_RESTARTED: False,
}
