package capture.ledger;

// Starts Temporal's time-skipping test server on the port given (the only argument the SDK's
// ephemeral-server launcher passes), for TestWorkflowEnvironment.createTimeSkipping in
// test/workflows. SLF4J has no binding here, so it says nothing unless it fails.
public final class TemporalTestServer {
  private TemporalTestServer() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: TemporalTestServer <port>");
      System.exit(2);
    }
    io.temporal.testserver.TestServer.main(args);
  }
}
