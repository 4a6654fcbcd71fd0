"""The live table's service: everything a table at the server is, without the web.

- the tables and their order of actions (`tables`), the SQLite log and the game records
  (`store`, `records`), the dice tally (`dice`), device tokens, join codes and who may do
  what (`access`), the published snapshot (`snapshot`), text checks and the players'
  names in the engine's sentences (`text`, `words`);
- the camera's roll, in one pass: the hub (`camera_hub`) with its runtime, feed and
  settings (`camera_runtime`, `camera_feed`, `camera_settings`), the one decision
  (`camera_decision`, over the held readings' pure functions in `held_reading`), the one
  intake (`roll_intake`, with `camera_pictures`), and the setup that learns from applied
  rolls (`learning`).

It imports nothing of companion.web, FastAPI, Starlette or Jinja2
(tests/test_architecture.py): companion/web/ translates HTTP and WebSocket to calls here
and draws what it reads."""
