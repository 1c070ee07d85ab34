package export

import (
	"fmt"
	"regexp"
	"strings"
)

// FlinkImage is the image the sample FlinkDeployment names: Flink's own,
// to which the connector jars and the SQL runner must be added
// (docs/flink-export.md).
const FlinkImage = "flink:2.0-java17"

var dnsUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// K8s returns a sample Kubernetes manifest that runs the script through
// the Flink Kubernetes Operator: a ConfigMap holding the script and a
// FlinkDeployment (application mode) whose job is the operator's SQL
// runner, reading the script from the ConfigMap.
func K8s(s *Script) string {
	name := strings.Trim(dnsUnsafe.ReplaceAllString(strings.ToLower(s.Pipeline), "-"), "-")
	if name == "" {
		name = "etld-pipeline"
	}
	file := name + ".sql"
	var b strings.Builder
	fmt.Fprintf(&b, `# Runs the etld pipeline %[1]s on Kubernetes through the Flink Kubernetes
# Operator (written by etld export flink --k8s). The image must hold the
# operator's SQL runner at /opt/flink/usrlib/sql-runner.jar and the
# connector jars in /opt/flink/lib: docs/flink-export.md shows a Dockerfile.
`, s.Pipeline)
	if len(s.Placeholders) > 0 {
		b.WriteString("# The script holds placeholders: substitute them before applying, e.g.\n")
		b.WriteString("#   envsubst < THIS.yaml | kubectl apply -f -\n")
		for _, p := range s.Placeholders {
			fmt.Fprintf(&b, "#   ${%s}: %s\n", p.Name, p.Where)
		}
	}
	fmt.Fprintf(&b, `apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s-sql
data:
  %[2]s: |
`, name, file)
	for _, line := range strings.Split(strings.TrimRight(s.SQL, "\n"), "\n") {
		if line == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("    " + line + "\n")
	}
	fmt.Fprintf(&b, `---
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: %[1]s
spec:
  image: %[3]s
  flinkVersion: v2_0
  serviceAccount: flink
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "1"
    state.checkpoints.dir: file:///flink-data/checkpoints
    state.savepoints.dir: file:///flink-data/savepoints
  jobManager:
    resource:
      memory: "2048m"
      cpu: 1
  taskManager:
    resource:
      memory: "2048m"
      cpu: 1
  podTemplate:
    spec:
      containers:
        - name: flink-main-container
          volumeMounts:
            - name: sql
              mountPath: /opt/flink/usrlib/sql-scripts
            - name: flink-data
              mountPath: /flink-data
      volumes:
        - name: sql
          configMap:
            name: %[1]s-sql
        - name: flink-data
          emptyDir: {}
  job:
    jarURI: local:///opt/flink/usrlib/sql-runner.jar
    args: ["/opt/flink/usrlib/sql-scripts/%[2]s"]
    parallelism: 1
    upgradeMode: stateless
`, name, file, FlinkImage)
	return b.String()
}
