# bondtop: build, test, lint, and the real-kernel lab.
#
#   make build       static binary in ./bin/bondtop (CGO_ENABLED=0; TAGS=nometrics: no /metrics server)
#   make test        everything CI runs: deps, lint, unit tests with -race, the lab
#   make lint        gofmt, go vet, staticcheck, the docs' relative links
#   make lab-deps    qemu, tc, bpftool + Debian's 6.1 and 6.12 kernels into .cache/lab (needs root/apt)
#   make test-lab    the real-kernel suite, once on each kernel (TestLab/kernel-6.1, TestLab/kernel-6.12)
#   make lab-fixtures  capture fixture trees from the lab (kernel $(LAB_FIXTURES_KERNEL)) into testdata/lab
#   make ovs-fixtures  capture OVSDB and unixctl replies of a private, real OVS into ovs/testdata
#   make fuzz        every parser's fuzz target, FUZZTIME each (default 60s)
#   make fuzz-short  the untrusted-text targets (config readers, printable), 10s each; part of make test
#   make bench       the benchmarks, with the allocation budgets (docs/performance.md)
#   make generate    the flow meter's eBPF objects from C (needs clang, llvm)
#   make check-generate  the committed eBPF objects are what generate makes
#   make measure     the dashboard beside bmon (needs tmux, bmon) and the many-bonds
#                    table against the floor, in one run (docs/performance.md)
#   make package     .deb and .rpm for amd64 and arm64 into dist/ (PKGDIR=DIR elsewhere)

GO          ?= go
STATICCHECK_VERSION := v0.8.2
GOBIN       := $(shell $(GO) env GOPATH)/bin
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
FUZZTIME    ?= 60s
# How long the fuzzer may spend shrinking each new interesting input.
FUZZMINIMIZE ?= 60s
# The kernel whose trees testdata/lab holds (their golden files were reviewed on it).
LAB_FIXTURES_KERNEL ?= 6.1

.PHONY: build test deps tools lint unit lab-deps test-lab lab-fixtures ovs-fixtures fuzz fuzz-short bench clean generate measure check-generate package

# TAGS=nometrics: a smaller binary without the /metrics server (--listen refused).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags "-s -w -X main.version=$(VERSION)" -o bin/bondtop ./cmd/bondtop

test: deps lint check-generate unit fuzz-short test-lab

deps: tools lab-deps
	./scripts/test-deps.sh

tools:
	@test -x $(GOBIN)/staticcheck || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: tools
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags nometrics ./cmd/bondtop
	GOOS=darwin $(GO) vet ./...
	$(GOBIN)/staticcheck ./...
	$(GOBIN)/staticcheck -tags nometrics ./cmd/bondtop
	$(GO) run ./scripts/check-links

# The lab package is left to test-lab, which runs it verbosely once.
unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v '/lab')

lab-deps:
	./scripts/lab-deps.sh

# One VM run per kernel, each its own subtest: TestLab/kernel-6.1 and
# TestLab/kernel-6.12 (BONDTOP_LAB_KERNEL=6.12 picks one).
test-lab:
	@./scripts/lab-deps.sh || { [ "$$CI" != true ] && echo "lab: dependencies missing; the lab tests will say why and skip (CI fails here)"; }
	$(GO) test -count=1 -v -timeout 40m ./lab/...

lab-fixtures: lab-deps
	BONDTOP_LAB_KERNEL=$(LAB_FIXTURES_KERNEL) $(GO) test -count=1 -v -timeout 20m -run TestLab ./lab/ -args -fixtures $(CURDIR)/testdata/lab

# Needs root and openvswitch-switch (scripts/test-deps.sh); review the diff.
ovs-fixtures:
	$(GO) test -count=1 -run TestRealOVS ./ovs/ -args -ovs-fixtures $(CURDIR)/ovs/testdata

# Every fuzz target, FUZZTIME each, one after the other.
FUZZ_TARGETS := bonding:FuzzParseProc bonding:FuzzParseNetDev bonding:FuzzReadSysfs \
	bonding:FuzzNetlinkMessage bonding:FuzzHash record:FuzzReadFrom load:FuzzControlMessage \
	cmd/bondtop:FuzzParseAllow \
	intent:FuzzNetplan intent:FuzzNMKeyfile intent:FuzzIfcfg intent:FuzzNetworkd intent:FuzzIfupdown \
	internal/printable:FuzzString internal/printable:FuzzJSON internal/printable:FuzzText metrics/webguard:FuzzCheck metrics:FuzzProcFiles \
	drill:FuzzPeerNotification fleet:FuzzParseSelector \
	collector/flowmeter:FuzzParseFrame \
	collector/neighbors:FuzzDecode bonding:FuzzParseXstats collector/neighbors:FuzzDecodeLACPDU \
	ovs:FuzzDecodeMessage ovs:FuzzParseBondShow ovs:FuzzParseLACPShow \
	bonding/module:FuzzDecode bonding:FuzzParseEthtool collector/live:FuzzLinkMemo \
	collector/live:FuzzRtnlMessages ui:FuzzDropCluster

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) -parallel 1 ./$$pkg/ || exit 1; \
	done

# The targets for text from outside (configuration files, the escaping of
# what reaches a terminal or JSON), briefly, on every `make test`. Counted
# in executions, not seconds: a duration-bounded run can fail with a bare
# "context deadline exceeded" when the deadline falls while a worker is
# busy (golang/go#75804), and shrinking a long input stalls a worker for
# up to FUZZMINIMIZE.
FUZZ_SHORT_TARGETS := intent:FuzzNetplan intent:FuzzNMKeyfile intent:FuzzIfcfg intent:FuzzNetworkd \
	intent:FuzzIfupdown internal/printable:FuzzString internal/printable:FuzzJSON internal/printable:FuzzText
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZ_TARGETS="$(FUZZ_SHORT_TARGETS)" FUZZTIME=100000x FUZZMINIMIZE=200x

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./bonding/ ./collector/... ./diagnose/ ./ui/ ./cmd/bondtop/
	$(GO) test -run '^$$' -bench Loopback -count 5 ./load/

# The eBPF flow meter: C compiled by clang through bpf2go; the objects and
# their Go bindings are committed, so `go build` needs no clang.
generate:
	$(GO) generate ./collector/flowmeter/

check-generate:
	GO=$(GO) ./scripts/check-generate.sh

measure: build
	./scripts/measure.sh bin/bondtop

# The packages: a static binary per architecture, then nfpm (a Go library,
# its own module in scripts/package) puts it with the unit, the man page,
# the completions, the rules and the dashboard (docs/packaging.md).
PKGDIR      ?= dist
PKG_ARCHES  ?= amd64 arm64
package:
	@for arch in $(PKG_ARCHES); do \
		echo "build linux/$$arch"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o bin/linux-$$arch/bondtop ./cmd/bondtop || exit 1; \
	done
	cd scripts/package && $(GO) run . -repo $(CURDIR) -out $(abspath $(PKGDIR)) -version $(VERSION) \
		$(foreach arch,$(PKG_ARCHES),-bin $(arch)=$(CURDIR)/bin/linux-$(arch)/bondtop)

clean:
	rm -rf bin dist
