import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.CommandLineInput;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local bound to one address. Its jar takes no listen address: its Jetty server listens on every interface
 * of the machine. This starts the same server from the same command-line options (-port, -inMemory, -dbPath,
 * -sharedDb, -disableTelemetry, ...) and, before it starts, points its connector at the address in the system
 * property {@code dynamodb.local.host}. Compiled and run by local/dynamodb-local.ts.
 */
class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    String host = System.getProperty("dynamodb.local.host");
    if (host == null || host.isEmpty()) throw new IllegalArgumentException("-Ddynamodb.local.host is not set");
    CommandLineInput input = new CommandLineInput(args);
    if (!input.init()) System.exit(2);
    DynamoDBProxyServer proxy = ServerRunner.createServer(input);
    // The Jetty server is a private field; no setting of the jar reaches its connector.
    Field jettyField = DynamoDBProxyServer.class.getDeclaredField("server");
    jettyField.setAccessible(true);
    Server jetty = (Server) jettyField.get(proxy);
    for (Connector connector : jetty.getConnectors()) ((ServerConnector) connector).setHost(host);
    proxy.start();
    proxy.join();
  }
}
