/**
 * The protobuf bodies of the control-plane messages a router and this controller exchange, as proto3 text: this
 * project's own schema of the fields it reads or writes, written from the reference's wire format (field numbers and
 * types are the wire; names are ours). Packages keep the families apart as the reference does: `ctrl` for the
 * fabric's messages (content types from 1000; links in a schema of their own), `edge` for the edge's (from 20000),
 * `metrics` for a router's metrics report. A field the controller has no use for may be left out: protobuf skips
 * unknown fields on decode.
 *
 * Parsed once, on first use, by protobufjs (`protobuf-codec.ts`); a message is named by its full name (`ctrl.Route`).
 */
export const CTRL_SCHEMA = `
syntax = "proto3";
package ctrl;

// A router's link listener (hello header 1000), passed on to its peers in PeerStateChange (see CTRL_LINK_SCHEMA).
message Listener {
  string address = 1;
  string protocol = 2;
  repeated string costTags = 3;
  repeated string groups = 4;
  string localBinding = 5;
}
message Listeners { repeated Listener listeners = 1; }

enum DestType { Start = 0; End = 1; Link = 2; }
message RouteForward { string srcAddress = 1; string dstAddress = 2; DestType dstType = 3; }
message RouteEgress { string binding = 1; string address = 2; string destination = 3; map<uint32, bytes> peerData = 4; }
message RouteContext { map<string, string> fields = 1; uint32 channelMask = 2; }
// Sent to each router of a circuit's path (1005); answered by a RouteResult (1022, headers only).
message Route {
  string circuitId = 1;
  uint32 attempt = 2;
  RouteEgress egress = 3;
  repeated RouteForward forwards = 4;
  RouteContext context = 5;
  // Nanoseconds the router has left to set the route up.
  uint64 timeout = 6;
  map<string, string> tags = 7;
}
message Unroute { string circuitId = 1; bool now = 2; }

enum FaultSubject {
  IngressFault = 0;
  EgressFault = 1;
  LinkFault = 2;
  ForwardFault = 3;
  UnknownOwnerForwardFault = 4;
  LinkDuplicate = 5;
}
// A circuit's end seen by a router (1004); for forward faults, id is several circuit ids separated by spaces.
message Fault { FaultSubject subject = 1; string id = 2; uint32 iteration = 3; }
// The circuits a router has seen idle (1034), with how long each was idle, in nanoseconds.
message CircuitConfirmation { repeated string circuitIds = 1; map<string, int64> idleTimes = 2; }
message RemoveTerminatorsRequest { repeated string terminatorIds = 1; }

message RouterInterface {
  string name = 1;
  string hardwareAddress = 2;
  int64 mtu = 3;
  int64 index = 4;
  uint64 flags = 5;
  repeated string addresses = 6;
}
message RouterInterfacesUpdate { repeated RouterInterface interfaces = 1; }
`;

/**
 * The fabric's messages about links between routers (issue 37), in package `ctrl` beside `CTRL_SCHEMA` (protobufjs
 * merges the two): a router learns its peers and their link listeners (PeerStateChanges, 1050), asks the controller
 * whether the router dialing it is who it claims (VerifyRouter, 1036), and reports the links it dialed (RouterLinks,
 * 1035) and their underlay connections (LinkState, 1053). Link faults are `ctrl.Fault`s of subject LinkFault or
 * LinkDuplicate, naming the link and its iteration.
 */
export const CTRL_LINK_SCHEMA = `
syntax = "proto3";
package ctrl;

// A peer as the controller tells a router of it: Healthy (connected: its version and link listeners), Unhealthy
// (exists, not connected) or Removed (gone).
enum PeerState { Healthy = 0; Unhealthy = 1; Removed = 2; }
message PeerStateChange {
  string id = 1;
  // The peer's software version (its hello's): the dialer picks its kind of link by it.
  string version = 2;
  PeerState state = 3;
  repeated Listener listeners = 4;
}
message PeerStateChanges { repeated PeerStateChange changes = 1; }

// The router dialing a link, as the listening router asks about it: its claimed id, and the SHA-1 fingerprints (hex)
// of every certificate it presented. Answered by a result (2).
message VerifyRouter { string routerId = 1; repeated string fingerprints = 2; }

// One underlay connection of a link, and the set of them, numbered so a late report never replaces a newer one.
message LinkConn { string type = 1; string localAddr = 2; string remoteAddr = 3; }
message LinkConnState { uint32 stateIteration = 1; repeated LinkConn conns = 2; }

// The links a router dialed: new ones as they come (fullRefresh false), every one it holds when it (re)connects.
message RouterLinks {
  message RouterLink {
    string id = 1;
    string destRouterId = 2;
    string linkProtocol = 3;
    repeated string linkCostTags = 4;
    string dialAddress = 5;
    // Its dial attempt: a higher one replaces the link of the same id.
    uint32 iteration = 6;
    LinkConnState connState = 7;
  }
  repeated RouterLink links = 1;
  bool fullRefresh = 2;
}

// A dialed link's underlay connections changed (1053).
message LinkStateUpdate { string linkId = 1; uint32 linkIteration = 2; LinkConnState connState = 3; }
`;

/**
 * A router's metrics report (1007, the reference's `metrics_pb.MetricsMessage`), as far as links need it: the reporter
 * and its histograms' means, among them each link's heartbeat round trip (`link.<id>.latency`) and send-queue time
 * (`link.<id>.queue_time`), in nanoseconds. The rest of the report (meters, timers, counters) is skipped unread.
 */
export const METRICS_SCHEMA = `
syntax = "proto3";
package metrics;

message Histogram { double mean = 3; }
message MetricsMessage {
  string sourceId = 2;
  map<string, Histogram> histograms = 8;
}
`;

export const EDGE_SCHEMA = `
syntax = "proto3";
package edge;

// Sent by the controller once a router's hello is accepted (20000); the router answers with a ClientHello (20001).
message ServerHello {
  string version = 1;
  map<string, string> data = 2;
  map<string, bytes> byteData = 3;
}
message Address {
  string value = 10;
  string protocol = 20;
  string hostname = 30;
  int32 port = 40;
}
// One edge listener of a router: where it listens, and the address SDKs are told to dial.
message EdgeListener { Address address = 10; Address advertise = 20; }
message ClientHello {
  string version = 1;
  string hostname = 2;
  repeated string protocols = 3;
  map<string, string> data = 4;
  repeated string protocolPorts = 5;
  repeated EdgeListener listeners = 10;
}

// An API session as a router learns of it: the (opaque) token an SDK presents, and the certificates it may use.
message ApiSession {
  string token = 1;
  repeated string certFingerprints = 2;
  string id = 3;
  string identityId = 4;
}
message ApiSessionAdded { bool isFullState = 1; repeated ApiSession apiSessions = 2; }
message ApiSessionUpdated { repeated ApiSession apiSessions = 1; }
message ApiSessionRemoved { repeated string tokens = 1; repeated string ids = 2; }
message ApiSessionHeartbeat { repeated string tokens = 1; }
message SessionRemoved { repeated string tokens = 1; repeated string ids = 2; }
message RequestClientReSync { string reason = 1; }
message ValidateSessionsRequest { repeated string sessionTokens = 1; }

enum TerminatorPrecedence { Default = 0; Required = 1; Failed = 2; }
message CreateTerminatorV2Request {
  string address = 1;
  string sessionToken = 2;
  repeated string fingerprints = 3;
  map<uint32, bytes> peerData = 4;
  uint32 cost = 5;
  TerminatorPrecedence precedence = 6;
  string instanceId = 7;
  bytes instanceSecret = 8;
  string apiSessionToken = 9;
}
enum CreateTerminatorResult {
  Success = 0;
  FailedIdConflict = 1;
  FailedOther = 2;
  FailedBusy = 3;
  FailedInvalidSession = 4;
}
message CreateTerminatorV2Response {
  string terminatorId = 1;
  CreateTerminatorResult result = 2;
  string msg = 3;
  uint32 errorCode = 4;
  uint32 retryHint = 5;
}
message UpdateTerminatorRequest {
  string sessionToken = 1;
  repeated string fingerprints = 2;
  string terminatorId = 3;
  uint32 cost = 4;
  TerminatorPrecedence precedence = 5;
  bool updatePrecedence = 6;
  bool updateCost = 7;
  string apiSessionToken = 8;
}
message HealthEventRequest {
  string sessionToken = 1;
  repeated string fingerprints = 2;
  string terminatorId = 3;
  bool checkPassed = 4;
  string apiSessionToken = 5;
}

// The router data model: what a router learns of the network to check SDK connections on its own.
message SubscribeToDataModelRequest {
  uint64 currentIndex = 1;
  uint32 subscriptionDurationSeconds = 2;
  bool renew = 3;
  string timelineId = 4;
  string subscriptionId = 5;
}
enum DataAction { Create = 0; Update = 1; Delete = 2; }
enum KeyUsage { JWTValidation = 0; ClientX509CertValidation = 1; }
enum KeyFormat { X509CertDer = 0; PKIXPublicKey = 1; }
message PublicKey {
  bytes data = 1;
  string kid = 2;
  repeated KeyUsage usages = 3;
  KeyFormat format = 4;
}
message ServiceConfigs { map<string, string> configs = 1; }
message DataIdentity {
  string id = 1;
  string name = 2;
  TerminatorPrecedence defaultHostingPrecedence = 3;
  uint32 defaultHostingCost = 4;
  map<string, TerminatorPrecedence> serviceHostingPrecedences = 5;
  map<string, uint32> serviceHostingCosts = 6;
  bytes appDataJson = 7;
  map<string, ServiceConfigs> serviceConfigs = 8;
  bool disabled = 9;
}
message DataService { string id = 1; string name = 2; bool encryptionRequired = 3; repeated string configs = 4; }
message DataEvent {
  DataAction action = 1;
  bool isSynthetic = 3;
  oneof model {
    DataIdentity identity = 10;
    DataService service = 11;
    // The tunneler's part (below): what a tunneling router's own identity is granted.
    DataServicePolicy servicePolicy = 12;
    DataPostureCheck postureCheck = 13;
    PublicKey publicKey = 14;
    DataServicePolicyChange servicePolicyChange = 16;
    DataConfigType configType = 17;
    DataConfig config = 18;
  }
}
message DataState {
  repeated DataEvent events = 1;
  uint64 endIndex = 2;
  string timelineId = 3;
}
message DataChangeSet {
  uint64 index = 1;
  bool isSynthetic = 2;
  repeated DataEvent changes = 3;
  string timestampId = 4;
  uint64 previousIndex = 5;
}

// ---- The router-embedded tunneler (issue 37, design step 10): a block of its own. ----
// What a tunneling router's data model adds (the services, policies, configs and posture checks its own identity is
// granted), and the requests its tunnel sends for what it hosts (terminators) and intercepts (circuits).
enum PolicyType { InvalidPolicy = 0; DialPolicy = 1; BindPolicy = 2; }
enum ServicePolicyRelatedEntityType {
  InvalidRelatedType = 0;
  RelatedService = 1;
  RelatedIdentity = 2;
  RelatedPostureCheck = 3;
}
message DataConfigType { string id = 1; string name = 2; }
message DataConfig { string id = 1; string typeId = 2; string name = 3; string dataJson = 4; }
message DataServicePolicy { string id = 1; string name = 2; PolicyType policyType = 3; }
// The entities a policy relates to, of one type: a full state adds them after the policy.
message DataServicePolicyChange {
  string policyId = 1;
  repeated string relatedEntityIds = 2;
  ServicePolicyRelatedEntityType relatedEntityType = 3;
  bool add = 4;
}
message DataPostureCheck {
  message Mac { repeated string macAddresses = 1; }
  message Mfa {
    int64 timeoutSeconds = 1;
    bool promptOnWake = 2;
    bool promptOnUnlock = 3;
    bool ignoreLegacyEndpoints = 4;
  }
  message Os { string osType = 1; repeated string osVersions = 2; }
  message OsList { repeated Os osList = 1; }
  message Process { string osType = 1; string path = 2; repeated string hashes = 3; repeated string fingerprints = 4; }
  message ProcessMulti { string semantic = 1; repeated Process processes = 2; }
  message Domains { repeated string domains = 1; }
  string id = 1;
  string name = 2;
  string typeId = 4;
  oneof subtype {
    Mac mac = 7;
    Mfa mfa = 8;
    OsList osList = 9;
    Process process = 10;
    ProcessMulti processMulti = 11;
    Domains domains = 12;
  }
}
// A tunneling router hosts a service (20413, sent without waiting; answered by 20414, matched by terminator id).
message CreateTunnelTerminatorRequestV2 {
  string serviceId = 1;
  string address = 2;
  map<uint32, bytes> peerData = 3;
  uint32 cost = 4;
  TerminatorPrecedence precedence = 5;
  string instanceId = 6;
  bytes instanceSecret = 7;
  int64 startTime = 8;
}
message CreateTunnelTerminatorResponseV2 {
  string terminatorId = 1;
  int64 startTime = 2;
  CreateTerminatorResult result = 3;
  string msg = 4;
  uint32 errorCode = 5;
  uint32 retryHint = 6;
}
// Answered by an empty 20409, or a 20002 Error.
message UpdateTunnelTerminatorRequest {
  string terminatorId = 1;
  uint32 cost = 2;
  TerminatorPrecedence precedence = 3;
  bool updatePrecedence = 4;
  bool updateCost = 5;
}
// A tunneling router intercepted a connection to a service (20220): answered by 20221, or a 20002 Error.
message CreateTunnelCircuitV2Request {
  string serviceName = 1;
  string terminatorInstanceId = 2;
  map<uint32, bytes> peerData = 3;
}
message CreateTunnelCircuitV2Response {
  string circuitId = 1;
  string address = 2;
  map<uint32, bytes> peerData = 3;
  map<string, string> tags = 4;
}
`;
