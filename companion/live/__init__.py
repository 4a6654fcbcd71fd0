"""The camera side of the live table.

How the pieces fit (the web layer does the wiring):

    plan = demo.plan_source(camera=..., video=..., images=...)   # or the demo clip
    camera = worker.CameraWorker(plan.open, DiceReader.load(...), on_event,
                                 pace_fps=plan.pace_fps, reopen_at_end=plan.reopen_at_end)
    camera.start()          # its own thread: source -> settle.Settler.look (motion, no
                            # reading) -> DiceReader (only frames that can end a throw)
                            # -> settle.Settler.settle
    on_event(RollEvent)     # called on the worker thread (the event carries its frame):
                            # hop to the loop with run_coroutine_threadsafe(...)
    match.match_roll(event.dice, turn.on_throw().dice) -> rules Roll | match.Mismatch
    stats.dice_report(accepted rolls)       -> per-colour fairness verdicts
    camera.status(), camera.preview_jpeg()  # any thread, any time
    camera.stop()

Dependencies point inward: this package wires vision to rules (match builds a rules `Roll`)
and imports nothing of the web layer. No module here opens a camera at import time."""
