# throttlesim — `make help` lists the targets.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
BIN     := bin/throttlesim
SCENARIO ?= scenarios/outage.yaml

.PHONY: help build run test test-short test-race bench lint fmt check clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/throttlesim
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/throttlesim

run: build ## run the outage scenario (SCENARIO=file to choose another); results in results/
	./$(BIN) run $(SCENARIO)

test: ## the whole test suite (what CI runs)
	$(GO) vet ./...
	$(GO) test -count=1 ./...

test-short: ## the fast tests only
	$(GO) test -short -count=1 ./...

test-race: ## the tests under the race detector
	$(GO) test -race -short -count=1 ./...

bench: ## benchmarks: engine, policies, whole scenarios
	$(GO) test -run '^$$' -bench . -benchmem ./sim/...

lint: ## gofmt and go vet
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

fmt: ## gofmt every Go file
	gofmt -w $$(git ls-files '*.go')

check: lint test ## lint and test

clean: ## remove the binary and results/
	rm -rf bin results

# ---- experiments: each regenerates its figures and table in docs/experiments/ ----
# splice DOC,TABLE: replace the lines between <!-- table:begin --> and
# <!-- table:end --> in DOC with TABLE's contents.
define splice
	@grep -q '<!-- table:begin -->' $(1) && grep -q '<!-- table:end -->' $(1)
	@awk -v table=$(2) '/<!-- table:begin -->/ { print; while ((getline l < table) > 0) print l; skip = 1; next } \
		/<!-- table:end -->/ { skip = 0 } !skip { print }' $(1) > $(1).tmp && mv $(1).tmp $(1)
endef

RECONNECT_RUNS := reconnect-storm reconnect-storm-jitter reconnect-storm-backoff
RECONNECT_DOC  := docs/experiments/reconnect-storm

.PHONY: experiments experiment-reconnect
experiments: experiment-reconnect ## regenerate every experiment's figures and tables

experiment-reconnect: build ## the reconnect-storm experiment (docs/experiments/reconnect-storm.md)
	@mkdir -p $(RECONNECT_DOC)
	@for s in $(RECONNECT_RUNS); do \
		./$(BIN) run -q scenarios/$$s.yaml --out results/experiments/$$s || exit 1; \
		cp results/experiments/$$s/connections.png $(RECONNECT_DOC)/$$s-connections.png; \
		cp results/experiments/$$s/recovery.png $(RECONNECT_DOC)/$$s-recovery.png; \
	done
	./$(BIN) summarize $(addprefix results/experiments/,$(RECONNECT_RUNS)) > results/experiments/reconnect-storm-table.md
	$(call splice,$(RECONNECT_DOC).md,results/experiments/reconnect-storm-table.md)
	@echo "updated $(RECONNECT_DOC).md and its figures"
