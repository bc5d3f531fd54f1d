"""Harbor compatibility: what a task written for Harbor 0.25 expects, given to it by agentrun.

``fields``   every task.toml field: honoured, or named once as not supported
``imagemap`` ``--image-map FROM=TO``: a task Dockerfile's base images substituted at build time
``oracle``   Harbor's oracle: ``solution/solve.sh`` run in the agent's environment
``verifier`` Harbor's verifier: tests/test.sh in a fresh container made from the agent's
``compose``  ``environment/docker-compose.yaml`` services, through the real Docker Compose
``compose_main`` main's environment, env_file, working_dir and healthcheck, applied as Harbor does
``lockdown`` what those services may ask of the engine (``--allow-task-privileges`` to run them as written)
``steps``    ``[[steps]]``: a multi-step task, each step acted and graded in turn, rewards combined
``collect``  ``[[verifier.collect]]`` hooks and ``artifacts`` copied into the run folder
"""
