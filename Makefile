.PHONY: test run-example testenv-up testenv-down

# Starts MariaDB, Kafka and Elasticsearch on loopback (testenv/), runs go vet
# and go test -race against them, fuzzes pipeline files for 30s (FuzzLoadPlan),
# and stops what it started.
# Pass go test flags with ARGS, e.g. make test ARGS="-timeout 30m -run Kafka".
test:
	bash scripts/test.sh $(ARGS)

run-example:
	go run ./cmd/etld run configs/examples/hello-datagen.yaml

# Leave the services running for go test by hand: source testenv/.env afterwards.
testenv-up:
	bash testenv/up.sh

testenv-down:
	bash testenv/down.sh
