package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
)

// TestExampleKafkaOrders runs the two Kafka order examples the way the
// README tells a user to: kafka-orders-produce.yaml fills the topic, then
// kafka-orders.yaml (with `stop: latest`, so it ends) reads it back. Only
// the topic and group names differ, so runs never share data.
func TestExampleKafkaOrders(t *testing.T) {
	brokers := testenv.Kafka(t)
	t.Setenv("KAFKA_BROKERS", brokers)
	dir := workdir(t)
	topic := testenv.UniqueName(t, "orders")
	rewrite(t, filepath.Join(dir, "configs/examples/kafka-orders-produce.yaml"),
		"topic: orders\n", "topic: "+topic+"\n")
	rewrite(t, filepath.Join(dir, "configs/examples/kafka-orders.yaml"),
		"topic: orders\n", "topic: "+topic+"\n",
		"group_id: etld-orders\n", "group_id: "+topic+"\n    stop: latest\n")

	_, stderr, code := etld(t, dir, "run", "--quiet", "configs/examples/kafka-orders-produce.yaml")
	if code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := etld(t, dir, "run", "--quiet", "configs/examples/kafka-orders.yaml")
	if code != 0 {
		t.Fatalf("consume: exit %d: %s", code, stderr)
	}
	// Fold the printed changelog: the last +I/+U row per customer is its
	// final revenue row; their order counts add up to every produced order.
	final := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		kind, fields, ok := strings.Cut(line, "[")
		if !ok {
			t.Fatalf("unexpected output line %q", line)
		}
		customer, _, _ := strings.Cut(fields, ",")
		switch kind {
		case "+I", "+U":
			final[customer] = strings.TrimSuffix(fields, "]")
		case "-U", "-D":
			delete(final, customer)
		}
	}
	if len(final) != 20 {
		t.Errorf("got %d customers, want the 20 the generator makes:\n%s", len(final), stdout)
	}
	orders := 0
	for _, fields := range final {
		parts := strings.Split(fields, ", ")
		if len(parts) != 3 {
			t.Fatalf("row %q: want customer, orders, revenue", fields)
		}
		n, err := strconv.Atoi(parts[1])
		if err != nil {
			t.Fatalf("row %q: orders: %v", fields, err)
		}
		orders += n
	}
	if orders != 1000 {
		t.Errorf("orders add up to %d, want the 1000 produced", orders)
	}
}

// rewrite replaces each old string (which must occur) with its new one.
func rewrite(t *testing.T, path string, oldNew ...string) {
	t.Helper()
	data := readFile(t, path)
	for i := 0; i < len(oldNew); i += 2 {
		if !strings.Contains(data, oldNew[i]) {
			t.Fatalf("%s has no %q", path, oldNew[i])
		}
		data = strings.Replace(data, oldNew[i], oldNew[i+1], 1)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
