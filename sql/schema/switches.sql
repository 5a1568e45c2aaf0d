-- queen: the operator's switches. One row per surface paused or resumed by
-- queen.system_switches (push, pop, kv, timers_schedule, timers_fire);
-- a surface without a row runs. Read by every call of the surface in
-- every session (through a cache in shared memory), so every front-end
-- obeys the same switch.
CREATE TABLE queen.system_state (
    key        text PRIMARY KEY,
    paused     boolean NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
