package capture.ledger;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * A single OpenSearch node for the local stack (npm run stack:up -- --profile search), built from
 * the Maven Central jars only: the server plus two modules loaded as classpath plugins,
 * transport-netty4 (the HTTP and transport layers) and analysis-common (the cjk analyzer and
 * friends). No security plugin, no other modules. Settings come as key=value arguments.
 *
 * Built by scripts/tools.mjs (javac against .tools/opensearch/lib) and started by
 * scripts/stack.mjs; this is how OpenSearch's own test framework starts nodes with classpath
 * plugins (a Node subclass using the protected constructor).
 */
public final class OpenSearchLauncher {
    private static final List<Class<? extends Plugin>> MODULES = List.of(Netty4Plugin.class, CommonAnalysisPlugin.class);

    private static final class LedgerNode extends Node {
        LedgerNode(Environment environment, Collection<Class<? extends Plugin>> classpathPlugins) {
            super(environment, classpathPlugins, true);
        }
    }

    /** Console logging (stack.mjs sends the node's output to .stack/logs/opensearch.log). */
    private static final String LOG4J2 = String.join(
        "\n",
        "status = error",
        "appender.console.type = Console",
        "appender.console.name = console",
        "appender.console.layout.type = PatternLayout",
        "appender.console.layout.pattern = [%d{ISO8601}][%-5p][%-25c{1.}] [%node_name]%marker %m%n",
        "rootLogger.level = info",
        "rootLogger.appenderRef.console.ref = console",
        ""
    );

    private OpenSearchLauncher() {}

    public static void main(String[] args) throws Exception {
        Settings.Builder builder = Settings.builder();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                System.err.println("usage: OpenSearchLauncher key=value ... (got " + arg + ")");
                System.exit(2);
            }
            builder.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        Settings settings = builder.build();
        String nodeName = settings.get("node.name", "capture-ledger");

        LogConfigurator.registerErrorListener();
        LogConfigurator.setNodeName(nodeName);
        Environment environment = InternalSettingsPreparer.prepareEnvironment(settings, Collections.emptyMap(), null, () -> nodeName);
        Path log4j2 = environment.configFile().resolve("log4j2.properties");
        Files.createDirectories(log4j2.getParent());
        Files.writeString(log4j2, LOG4J2, StandardCharsets.UTF_8);
        LogConfigurator.configure(environment);
        Node node = new LedgerNode(environment, MODULES);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                stopped.countDown();
            }
        }, "opensearch-shutdown"));
        try {
            node.start();
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.out.println("OpenSearchLauncher: node " + nodeName + " started");
        stopped.await();
    }
}
