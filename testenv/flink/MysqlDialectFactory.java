// MysqlDialectFactory is the JDBC connector's MySQL dialect for FlinkRun.
//
// Flink's own (flink-connector-jdbc-mysql) is not served where etld's tests
// run, only the connector's core, so the tests of `etld export flink` bring
// this one: the same SQL as Flink's MySQL dialect (backquoted identifiers,
// INSERT ... ON DUPLICATE KEY UPDATE for upserts, LIMIT), written here from
// the JdbcFactory contract. A user runs the exported script with Flink's
// jar instead (docs/flink-export.md).
package etld.testenv;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.apache.flink.connector.jdbc.core.database.JdbcFactory;
import org.apache.flink.connector.jdbc.core.database.catalog.JdbcCatalog;
import org.apache.flink.connector.jdbc.core.database.dialect.AbstractDialect;
import org.apache.flink.connector.jdbc.core.database.dialect.AbstractDialectConverter;
import org.apache.flink.connector.jdbc.core.database.dialect.JdbcDialect;
import org.apache.flink.connector.jdbc.core.database.dialect.JdbcDialectConverter;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;

public final class MysqlDialectFactory implements JdbcFactory {
    @Override
    public boolean acceptsURL(String url) {
        return url.startsWith("jdbc:mysql:") || url.startsWith("jdbc:mariadb:");
    }

    @Override
    public JdbcDialect createDialect() {
        return new Dialect();
    }

    @Override
    public JdbcCatalog createCatalog(
            ClassLoader loader, String name, String database, String user, String password, String url) {
        throw new UnsupportedOperationException("etld's test harness has no MySQL catalog");
    }

    static final class Dialect extends AbstractDialect {
        private static final long serialVersionUID = 1L;

        @Override
        public String dialectName() {
            return "MySQL";
        }

        @Override
        public JdbcDialectConverter getRowConverter(RowType rowType) {
            return new Converter(rowType);
        }

        @Override
        public String getLimitClause(long limit) {
            return "LIMIT " + limit;
        }

        @Override
        public Optional<String> defaultDriverName() {
            return Optional.of("com.mysql.cj.jdbc.Driver");
        }

        @Override
        public String quoteIdentifier(String identifier) {
            return "`" + identifier.replace("`", "``") + "`";
        }

        @Override
        public Optional<String> getUpsertStatement(String table, String[] fields, String[] uniqueKeys) {
            String updates = Arrays.stream(fields)
                    .map(f -> quoteIdentifier(f) + " = VALUES(" + quoteIdentifier(f) + ")")
                    .collect(Collectors.joining(", "));
            return Optional.of(getInsertIntoStatement(table, fields) + " ON DUPLICATE KEY UPDATE " + updates);
        }

        @Override
        public Optional<Range> timestampPrecisionRange() {
            return Optional.of(Range.of(0, 6));
        }

        @Override
        public Optional<Range> decimalPrecisionRange() {
            return Optional.of(Range.of(1, 65));
        }

        @Override
        public Set<LogicalTypeRoot> supportedTypes() {
            return EnumSet.of(
                    LogicalTypeRoot.CHAR, LogicalTypeRoot.VARCHAR, LogicalTypeRoot.BOOLEAN,
                    LogicalTypeRoot.VARBINARY, LogicalTypeRoot.DECIMAL, LogicalTypeRoot.TINYINT,
                    LogicalTypeRoot.SMALLINT, LogicalTypeRoot.INTEGER, LogicalTypeRoot.BIGINT,
                    LogicalTypeRoot.FLOAT, LogicalTypeRoot.DOUBLE, LogicalTypeRoot.DATE,
                    LogicalTypeRoot.TIME_WITHOUT_TIME_ZONE, LogicalTypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE,
                    LogicalTypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE);
        }
    }

    static final class Converter extends AbstractDialectConverter {
        private static final long serialVersionUID = 1L;

        Converter(RowType rowType) {
            super(rowType);
        }

        @Override
        public String converterName() {
            return "MySQL";
        }
    }
}
