"""The camera side of the live table.

How the pieces fit (the web layer does the wiring):

    plan = demo.plan_source(camera=..., video=..., images=...)   # or the demo clip
    worker = camera.CameraWorker(plan.open, DiceReader.load(...), on_event,
                                 pace_fps=plan.pace_fps, reopen_at_end=plan.reopen_at_end)
    worker.start()          # its own thread: source -> DiceReader -> settle.Settler
    on_event(RollEvent)     # called on the worker thread: hop to the loop with
                            # loop.call_soon_threadsafe(...)
    match.match_roll(event.dice, turn.dice) -> rules Roll | match.Mismatch
    stats.dice_report(accepted rolls)       -> per-colour fairness verdicts
    worker.status(), worker.preview_jpeg()  # any thread, any time
    worker.stop()

Dependencies point inward: this package wires vision to rules (match builds a rules `Roll`)
and imports nothing of the web layer. No module here opens a camera at import time."""
