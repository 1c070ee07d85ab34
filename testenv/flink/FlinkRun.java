// FlinkRun runs Flink SQL scripts in local mode, one JVM for many scripts,
// for etld's conformance suite and its `etld export flink` tests.
//
// Usage: FlinkRun [--timeout SECONDS] A.sql B.sql ...
//
// Each script runs in a fresh TableEnvironment: streaming unless the script
// sets 'execution.runtime-mode' to 'batch', parallelism 1, session time zone
// UTC (a script's own SET statements come after these defaults). Statements
// are split on ';' outside quotes and comments, an EXECUTE STATEMENT SET
// BEGIN ... END block being one statement. Every INSERT and statement set is
// awaited; a top-level query (SELECT, WITH, VALUES) is written into a print
// table made for it, so its rows read exactly as the print connector writes
// them. What the script writes to stdout (the print connector's output)
// goes to A.sql.out; a failure writes the chain of causes to A.sql.err and
// the next script runs. The exit code is 0 when every script was tried.
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;

public final class FlinkRun {
    private static final Pattern SET =
            Pattern.compile("(?is)^SET\\s+'([^']*)'\\s*=\\s*'((?:[^']|'')*)'$");
    private static final Pattern BATCH =
            Pattern.compile("(?is)SET\\s+'execution\\.runtime-mode'\\s*=\\s*'batch'");

    public static void main(String[] args) throws Exception {
        long timeoutSeconds = 300;
        List<Path> scripts = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--timeout") && i + 1 < args.length) {
                timeoutSeconds = Long.parseLong(args[++i]);
            } else {
                scripts.add(Path.of(args[i]));
            }
        }
        if (scripts.isEmpty()) {
            System.err.println("usage: FlinkRun [--timeout SECONDS] SCRIPT.sql...");
            System.exit(2);
        }
        PrintStream stdout = System.out;
        for (Path script : scripts) {
            Path out = Path.of(script + ".out");
            Path err = Path.of(script + ".err");
            Files.deleteIfExists(err);
            long t0 = System.nanoTime();
            Throwable failure = null;
            try (PrintStream capture =
                    new PrintStream(new FileOutputStream(out.toFile()), true, StandardCharsets.UTF_8)) {
                System.setOut(capture);
                try {
                    runScript(Files.readString(script), timeoutSeconds);
                } catch (Throwable t) {
                    failure = t;
                } finally {
                    System.out.flush();
                    System.setOut(stdout);
                }
            }
            if (failure != null) {
                Files.writeString(err, causes(failure), StandardCharsets.UTF_8);
            }
            System.err.printf(Locale.ROOT, "%s %s in %.1fs%n",
                    failure == null ? "ok" : "FAILED", script, (System.nanoTime() - t0) / 1e9);
        }
        // Local-mode executors leave non-daemon threads behind.
        System.exit(0);
    }

    static void runScript(String text, long timeoutSeconds) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("parallelism.default", "1");
        conf.setString("table.exec.resource.default-parallelism", "1");
        conf.setString("table.local-time-zone", "UTC");
        conf.setString("rest.port", "0");
        // On a shared, loaded machine a stop-the-world collection of a
        // large heap outlasts the default 50 s heartbeat and fails the
        // local job; a slow run is measured, not failed.
        conf.setString("heartbeat.timeout", "900000");
        // FLINKRUN_REMOTE=host:port submits to a session cluster's REST
        // endpoint instead (testenv/flinkcluster.sh), at
        // FLINKRUN_PARALLELISM (4 by default).
        String remote = System.getenv("FLINKRUN_REMOTE");
        if (remote != null && !remote.isEmpty()) {
            int colon = remote.lastIndexOf(':');
            String p = System.getenv().getOrDefault("FLINKRUN_PARALLELISM", "4");
            conf.setString("execution.target", "remote");
            conf.setString("rest.address", remote.substring(0, colon));
            conf.setString("rest.port", remote.substring(colon + 1));
            conf.setString("parallelism.default", p);
            conf.setString("table.exec.resource.default-parallelism", p);
        }
        EnvironmentSettings.Builder settings = EnvironmentSettings.newInstance().withConfiguration(conf);
        if (BATCH.matcher(text).find()) {
            settings.inBatchMode();
        } else {
            settings.inStreamingMode();
        }
        TableEnvironment env = TableEnvironment.create(settings.build());
        int queries = 0;
        for (String stmt : split(text)) {
            Matcher set = SET.matcher(stmt);
            if (set.matches()) {
                if (!set.group(1).equals("execution.runtime-mode")) {
                    env.getConfig().set(set.group(1), set.group(2).replace("''", "'"));
                }
                continue;
            }
            String head = firstWord(stmt);
            if ((head.equals("SELECT") || head.equals("WITH") || head.equals("VALUES")) && remote != null && !remote.isEmpty()) {
                collect(env.sqlQuery(stmt).execute(), timeoutSeconds);
                continue;
            }
            if (head.equals("SELECT") || head.equals("WITH") || head.equals("VALUES")) {
                Table query = env.sqlQuery(stmt);
                String sink = "__flinkrun_query_" + (queries++);
                env.executeSql(printTable(sink, query.getResolvedSchema()));
                await(query.executeInsert(sink), timeoutSeconds);
                continue;
            }
            TableResult result = env.executeSql(stmt);
            if (result.getJobClient().isPresent()) {
                await(result, timeoutSeconds);
            }
        }
    }

    static String printTable(String name, ResolvedSchema schema) {
        StringBuilder b = new StringBuilder("CREATE TEMPORARY TABLE `").append(name).append("` (");
        List<Column> cols = schema.getColumns();
        for (int i = 0; i < cols.size(); i++) {
            if (i > 0) {
                b.append(", ");
            }
            Column c = cols.get(i);
            b.append('`').append(c.getName().replace("`", "``")).append("` ")
                    .append(c.getDataType().getLogicalType().copy(true).asSerializableString());
        }
        return b.append(") WITH ('connector' = 'print')").toString();
    }

    // collect prints a query's changes as the print connector would (its
    // Row.toString), from the cluster's collect sink to this process:
    // the print connector would print on the TaskManagers. With
    // checkpointing on, the collect sink hands rows over only once a
    // checkpoint holds them, so a job restarted from its checkpoint
    // (a TaskManager lost) delivers each change exactly once.
    static void collect(TableResult result, long timeoutSeconds) throws Exception {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(timeoutSeconds));
                result.getJobClient().ifPresent(c -> c.cancel());
            } catch (InterruptedException e) {
                // the query ended in time
            }
        });
        watchdog.setDaemon(true);
        watchdog.start();
        result.getJobClient().ifPresent(c -> System.err.println("job " + c.getJobID()));
        try (org.apache.flink.util.CloseableIterator<org.apache.flink.types.Row> it = result.collect()) {
            while (it.hasNext()) {
                System.out.println(it.next().toString());
            }
        } finally {
            watchdog.interrupt();
        }
    }

    static void await(TableResult result, long timeoutSeconds) throws Exception {
        try {
            result.await(timeoutSeconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            result.getJobClient().ifPresent(c -> c.cancel());
            throw new TimeoutException("the job did not finish within " + timeoutSeconds + " s (unbounded source?)");
        }
    }

    static String firstWord(String stmt) {
        String s = stmt.stripLeading();
        while (s.startsWith("(")) {
            s = s.substring(1).stripLeading();
        }
        int end = 0;
        while (end < s.length() && Character.isLetter(s.charAt(end))) {
            end++;
        }
        return s.substring(0, end).toUpperCase(Locale.ROOT);
    }

    // split cuts a script into statements at ';' outside quotes ('...',
    // "...", `...`) and comments (-- and /* */), comments removed, and joins
    // an EXECUTE STATEMENT SET BEGIN ... END block back into one statement.
    static List<String> split(String text) {
        List<String> pieces = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int n = text.length();
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (c == '-' && i + 1 < n && text.charAt(i + 1) == '-') {
                while (i < n && text.charAt(i) != '\n') {
                    i++;
                }
                cur.append('\n');
            } else if (c == '/' && i + 1 < n && text.charAt(i + 1) == '*') {
                int close = text.indexOf("*/", i + 2);
                i = close < 0 ? n : close + 1;
                cur.append(' ');
            } else if (c == '\'' || c == '"' || c == '`') {
                int j = i + 1;
                while (j < n) {
                    if (text.charAt(j) == c) {
                        if (j + 1 < n && text.charAt(j + 1) == c) {
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    j++;
                }
                cur.append(text, i, Math.min(j + 1, n));
                i = j;
            } else if (c == ';') {
                pieces.add(cur.toString().strip());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        pieces.add(cur.toString().strip());

        List<String> stmts = new ArrayList<>();
        StringBuilder block = null;
        for (String p : pieces) {
            if (p.isEmpty()) {
                continue;
            }
            String upper = p.toUpperCase(Locale.ROOT).replaceAll("\\s+", " ");
            if (block == null && (upper.startsWith("EXECUTE STATEMENT SET") || upper.startsWith("BEGIN STATEMENT SET"))) {
                block = new StringBuilder(p).append(";\n");
            } else if (block != null) {
                if (upper.equals("END")) {
                    stmts.add(block.append("END").toString());
                    block = null;
                } else {
                    block.append(p).append(";\n");
                }
            } else {
                stmts.add(p);
            }
        }
        if (block != null) {
            stmts.add(block.toString());
        }
        return stmts;
    }

    static String causes(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            b.append(c.getClass().getName()).append(": ").append(c.getMessage()).append('\n');
            if (c.getCause() == c) {
                break;
            }
        }
        return b.toString();
    }
}
