#!/bin/sh
# The README's "Your first network" as one script that can run again: two identities, a service hosted by a
# server on 127.0.0.1 (its host.v1 config), its Dial and Bind policies, the two router policies, then the laptop
# enrolled by a certificate signing request and logged in, seeing the service it may dial; and, with `ziti` on PATH
# and an edge router online (`npm start -- --router`), a line through the service and back: an echo server, web-server
# hosting it with `ziti tunnel host`, laptop reaching it with `ziti tunnel proxy`. Each entity is looked up by name
# first and reused when it exists, so a second run ends where the first did, with the same ids; an error stops it
# with what the controller said (nothing answering: that the controller is not running).
#
#   ZITI_PASSWORD='<admin password>' sh examples/first-network.sh
#
# Environment:
#   ZITI_PASSWORD  the admin's password (required: `npm start` prints it on its first start)
#   ZITI_USERNAME  the admin's username (default admin)
#   ZITI_CTRL      the controller's address (default https://localhost:1280)
#   ZITI_CACERT    a PEM file of the CA that signs the controller's server certificate; without it the certificate is
#                  not checked (curl -k), as the README does for `npm start`'s local one
#   WEB_PORT       the port of the echo server on 127.0.0.1 that hosts web (default 8000)
#   PROXY_PORT     the port laptop's proxy listens on, on 127.0.0.1 (default 8080)
#
# Run it in a directory of its own (the repository's .gitignore keeps these out of git if it is the clone's root).
# Writes into the current directory, each file only once it is complete:
#   web-server.jwt          web-server's enrollment token, for `ziti edge enroll` (not written once it is used)
#   laptop.key, laptop.pem  laptop's key and the certificate its enrollment brought
#   web-server.json         with `ziti`: web-server's identity file, enrolled by `ziti edge enroll`
#   laptop.json             with `ziti`: laptop's identity file, from laptop.key, laptop.pem and the network's CAs
# Needs curl, node and openssl (no jq); runs in any POSIX shell (dash, bash).
set -eu
umask 077

ZITI_CTRL=${ZITI_CTRL:-https://localhost:1280}
WEB_PORT=${WEB_PORT:-8000}
PROXY_PORT=${PROXY_PORT:-8080}
ZITI_USERNAME=${ZITI_USERNAME:-admin}
if [ -z "${ZITI_PASSWORD:-}" ]; then
  echo 'first-network: set ZITI_PASSWORD to the admin password (npm start prints it on its first start)' >&2
  exit 2
fi
export ZITI_USERNAME ZITI_PASSWORD ZITI_CTRL
MGMT=$ZITI_CTRL/edge/management/v1
CLIENT=$ZITI_CTRL/edge/client/v1

# Files are made here, beside their final place, and moved there only when complete: a failed step leaves none.
WORK=$(mktemp -d ./.first-network.XXXXXX)
# What the traffic part starts (the echo server, the tunnelers), stopped with the script however it ends.
PIDS=''
trap 'if [ -n "$PIDS" ]; then kill $PIDS 2> /dev/null || true; fi; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

# What the script is doing, for its error messages.
STEP=starting
export STEP

# json PATH [optional]: prints PATH of the JSON answer on stdin: dotted (data.enrollment.ott.jwt), a number for an
# array index, `*` for each element of an array (data.*.name, printed comma-separated); a string as it is, anything
# else as JSON, with no line break. An error answer prints its code, message and cause (the field and value at fault,
# e.g. "duplicate value 'laptop'") and fails; so does an answer that is not JSON and, unless `optional`, a PATH that
# is not there.
json() {
  node -e '
    const [path, optional] = process.argv.slice(1);
    const step = `first-network: ${process.env.STEP}`;
    const text = require("node:fs").readFileSync(0, "utf8");
    if (text === "") {
      console.error(`${step}: no answer from ${process.env.ZITI_CTRL}: is the controller running (npm start)?`);
      process.exit(1);
    }
    let answer;
    try {
      answer = JSON.parse(text);
    } catch {
      console.error(`${step}: the answer is not JSON: ${text.slice(0, 300) || "(nothing)"}`);
      process.exit(1);
    }
    if (answer.error) {
      const { code, message, cause } = answer.error;
      console.error(`${step}: ${code}: ${message}${cause === undefined ? "" : ` cause: ${JSON.stringify(cause)}`}`);
      process.exit(1);
    }
    const at = (value, keys) => {
      if (keys.length === 0 || value === undefined || value === null) return value;
      const [key, ...rest] = keys;
      if (key === "*") return Array.isArray(value) ? value.map((item) => at(item, rest)) : undefined;
      return Object.hasOwn(value, key) ? at(value[key], rest) : undefined;
    };
    const value = at(answer, path.split("."));
    if (value === undefined || value === null) {
      if (optional === "optional") process.exit(0);
      console.error(`${step}: the answer has no ${path}: ${text.slice(0, 300)}`);
      process.exit(1);
    }
    const printable = (item) => (typeof item === "string" ? item : JSON.stringify(item));
    process.stdout.write(Array.isArray(value) && path.includes("*") ? value.map(printable).join(", ") : printable(value));
  ' "$@"
}

# curl that fails on a transport error (with curl's message), trusting ZITI_CACERT when it is set.
https() {
  if [ -n "${ZITI_CACERT:-}" ]; then
    curl -sS --cacert "$ZITI_CACERT" "$@"
  else
    curl -sS -k "$@"
  fi
}

# api ARGS...: https with the admin's session.
api() {
  https -H "zt-session: $ZT" -H 'content-type: application/json' "$@"
}

# ensure COLLECTION NAME BODY: sets ID to the id of COLLECTION's entity named NAME, created from BODY if there is none.
ensure() {
  STEP="looking up $1 $2"
  ID=$(api -G "$MGMT/$1" --data-urlencode "filter=name=\"$2\"" | json data.0.id optional)
  if [ -n "$ID" ]; then
    echo "$1 $2: $ID (found)"
    return
  fi
  STEP="creating $1 $2"
  ID=$(api -X POST "$MGMT/$1" -d "$3" | json data.id)
  echo "$1 $2: $ID (created)"
}

# keep NAME: moves NAME from the work directory into the current one, refusing an empty file.
keep() {
  if [ ! -s "$WORK/$1" ]; then
    echo "first-network: $STEP: $1 came out empty" >&2
    exit 1
  fi
  mv "$WORK/$1" "./$1"
}

STEP="logging in as $ZITI_USERNAME"
ZT=$(node -e 'process.stdout.write(JSON.stringify({ username: process.env.ZITI_USERNAME, password: process.env.ZITI_PASSWORD }))' |
  https -X POST "$MGMT/authenticate?method=password" -H 'content-type: application/json' --data-binary @- |
  json data.token)

ensure identities laptop '{"name":"laptop","type":"Default","isAdmin":false,
  "roleAttributes":["clients"],"enrollment":{"ott":true}}'
LAPTOP=$ID
ensure identities web-server '{"name":"web-server","type":"Default","isAdmin":false,
  "roleAttributes":["servers"],"enrollment":{"ott":true}}'
SERVER=$ID
STEP='looking up the host.v1 config type'
HOST_V1=$(api -G "$MGMT/config-types" --data-urlencode 'filter=name="host.v1"' | json data.0.id)
ensure configs web-host "{\"name\":\"web-host\",\"configTypeId\":\"$HOST_V1\",
  \"data\":{\"protocol\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":$WEB_PORT}}"
CONFIG=$ID
ensure services web "{\"name\":\"web\",\"roleAttributes\":[\"demo\"],\"encryptionRequired\":true,
  \"configs\":[\"$CONFIG\"]}"
ensure service-policies web-dial '{"name":"web-dial","type":"Dial","semantic":"AnyOf",
  "identityRoles":["#clients"],"serviceRoles":["#demo"]}'
ensure service-policies web-bind '{"name":"web-bind","type":"Bind","semantic":"AnyOf",
  "identityRoles":["#servers"],"serviceRoles":["#demo"]}'
ensure edge-router-policies all '{"name":"all","semantic":"AnyOf",
  "identityRoles":["#all"],"edgeRouterRoles":["#all"]}'
ensure service-edge-router-policies all '{"name":"all","semantic":"AnyOf",
  "serviceRoles":["#all"],"edgeRouterRoles":["#all"]}'

STEP='reading what laptop may dial'
echo "laptop may dial: $(api "$MGMT/identities/$LAPTOP/services?policyType=Dial" | json 'data.*.name')"
STEP='reading what web-server may bind'
echo "web-server may bind: $(api "$MGMT/identities/$SERVER/services?policyType=Bind" | json 'data.*.name')"

# web-server's token is for `ziti edge enroll web-server.jwt` on the host; once used, there is none to write.
STEP='reading web-server'
api "$MGMT/identities/$SERVER" | json data.enrollment.ott.jwt optional > "$WORK/web-server.jwt"
if [ -s "$WORK/web-server.jwt" ]; then
  keep web-server.jwt
  echo 'web-server.jwt: written (enroll it with `ziti edge enroll web-server.jwt`)'
else
  echo 'web-server.jwt: not written: web-server has enrolled already (its one-time token is used)'
fi

# enroll_laptop TOKEN: a new key, a CSR for it, and the certificate the ott enrollment answers with.
enroll_laptop() {
  STEP='enrolling laptop'
  openssl ecparam -name prime256v1 -genkey -noout -out "$WORK/laptop.key"
  openssl req -new -key "$WORK/laptop.key" -subj /CN=laptop -out "$WORK/laptop.csr"
  https -X POST "$CLIENT/enroll?method=ott&token=$1" -H 'content-type: application/x-pem-file' \
    --data-binary "@$WORK/laptop.csr" | json data.cert > "$WORK/laptop.pem"
  keep laptop.key
  keep laptop.pem
  echo 'laptop: enrolled: laptop.key, laptop.pem'
}

STEP='reading laptop'
TOKEN=$(api "$MGMT/identities/$LAPTOP" | json data.enrollment.ott.token optional)
if [ -n "$TOKEN" ]; then
  enroll_laptop "$TOKEN"
elif [ -s laptop.pem ] && [ -s laptop.key ]; then
  echo 'laptop: enrolled before (its one-time token is used): logging in with laptop.pem and laptop.key'
else
  # Enrolled, but its certificate is not here: the certificate authenticator goes back to an ott enrollment.
  echo 'laptop: enrolled before, but laptop.pem or laptop.key is missing here: re-enrolling laptop'
  STEP='re-enrolling laptop'
  AUTHENTICATOR=$(api "$MGMT/identities/$LAPTOP/authenticators" | json data.0.id)
  EXPIRES=$(node -e 'process.stdout.write(new Date(Date.now() + 24 * 3600 * 1000).toISOString())')
  api -X POST "$MGMT/authenticators/$AUTHENTICATOR/re-enroll" -d "{\"expiresAt\":\"$EXPIRES\"}" | json data.id > /dev/null
  TOKEN=$(api "$MGMT/identities/$LAPTOP" | json data.enrollment.ott.token)
  enroll_laptop "$TOKEN"
fi

STEP='logging laptop in with its certificate'
ZC=$(https --cert laptop.pem --key laptop.key -X POST "$CLIENT/authenticate?method=cert" \
  -H 'content-type: application/json' -d '{}' | json data.token)
STEP='listing the services laptop sees'
SERVICES=$(https -H "zt-session: $ZC" "$CLIENT/services")
echo "laptop sees: $(printf %s "$SERVICES" | json 'data.*.name'), permissions $(printf %s "$SERVICES" | json 'data.*.permissions')"

# The traffic: a line through web and back, with `ziti` (its tunnelers) and an edge router online.
if ! command -v ziti > /dev/null 2>&1; then
  echo 'traffic: skipped: no `ziti` on PATH (https://github.com/openziti/ziti/releases); with it and `npm start -- --router`, a line goes through web'
  exit 0
fi
STEP='looking for an edge router online'
ONLINE=$(api "$MGMT/edge-routers" | node -e '
  const routers = JSON.parse(require("node:fs").readFileSync(0, "utf8")).data ?? [];
  process.stdout.write(routers.filter((router) => router.isOnline).map((router) => router.name).join(", "));')
if [ -z "$ONLINE" ]; then
  echo 'traffic: skipped: no edge router is online (start the controller with `npm start -- --router`)'
  exit 0
fi
echo "traffic: through $ONLINE"

# web-server's identity file: enrolled from its token, once (a second run reuses the file; lost, it is enrolled anew).
if [ ! -s web-server.json ]; then
  if [ ! -s web-server.jwt ]; then
    STEP='re-enrolling web-server'
    AUTHENTICATOR=$(api "$MGMT/identities/$SERVER/authenticators" | json data.0.id)
    EXPIRES=$(node -e 'process.stdout.write(new Date(Date.now() + 24 * 3600 * 1000).toISOString())')
    api -X POST "$MGMT/authenticators/$AUTHENTICATOR/re-enroll" -d "{\"expiresAt\":\"$EXPIRES\"}" | json data.id > /dev/null
    api "$MGMT/identities/$SERVER" | json data.enrollment.ott.jwt > "$WORK/web-server.jwt"
    keep web-server.jwt
  fi
  STEP='enrolling web-server with ziti edge enroll'
  ziti edge enroll web-server.jwt -o "$WORK/web-server.json" > "$WORK/enroll.log" 2>&1 || {
    cat "$WORK/enroll.log" >&2
    exit 1
  }
  keep web-server.json
  echo 'web-server: enrolled: web-server.json'
fi

# laptop's identity file: what `ziti edge enroll` would have written, from the key and certificate it already has.
STEP='writing laptop.json'
https "$ZITI_CTRL/.well-known/est/cacerts" | openssl base64 -d | openssl pkcs7 -inform DER -print_certs > "$WORK/ca.pem"
node -e '
  const fs = require("node:fs");
  const pem = (file) => `pem:${fs.readFileSync(file, "utf8")}`;
  const [key, cert, ca, api] = process.argv.slice(1);
  const identity = { ztAPI: api, ztAPIs: null, configTypes: null, id: { key: pem(key), cert: pem(cert), ca: pem(ca) }, enableHa: false };
  fs.writeFileSync(process.argv[5], JSON.stringify(identity, null, 2));
' laptop.key laptop.pem "$WORK/ca.pem" "$CLIENT" "$WORK/laptop.json"
keep laptop.json

STEP='checking the ports of the echo server and the proxy'
node -e '
  const net = require("node:net");
  const check = ([port, setting]) => new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => {
      console.error(`first-network: port ${port} on 127.0.0.1 is in use: set ${setting} to a free port`);
      process.exit(1);
    });
    probe.listen(Number(port), "127.0.0.1", () => probe.close(resolve));
  });
  (async () => { for (const pair of [[process.argv[1], "WEB_PORT"], [process.argv[2], "PROXY_PORT"]]) await check(pair); })();
' "$WEB_PORT" "$PROXY_PORT"

STEP='starting the echo server, the host and the proxy'
node -e "require('net').createServer((c) => c.pipe(c)).listen($WEB_PORT, '127.0.0.1')" & PIDS="$PIDS $!"
ziti tunnel host -i web-server.json > "$WORK/host.log" 2>&1 & PIDS="$PIDS $!"
ziti tunnel proxy -i laptop.json "web:$PROXY_PORT" > "$WORK/proxy.log" 2>&1 & PIDS="$PIDS $!"

# A line through the proxy, tried for up to 30 s: the host needs a few seconds to bind web.
STEP='sending a line through web'
ANSWER=$(node -e '
  const net = require("node:net");
  const line = "hello through ziti";
  const deadline = Date.now() + 30000;
  const attempt = () => {
    const socket = net.connect(Number(process.argv[1]), "127.0.0.1", () => socket.write(`${line}\n`));
    let got = "";
    socket.setTimeout(3000);
    socket.on("data", (data) => {
      got += data;
      if (got.includes("\n")) { process.stdout.write(got.trim()); process.exit(0); }
    });
    const again = () => { socket.destroy(); if (Date.now() > deadline) process.exit(1); setTimeout(attempt, 1000); };
    socket.on("error", again);
    socket.on("timeout", again);
    socket.on("end", () => { if (!got.includes("\n")) again(); });
  };
  attempt();
' "$PROXY_PORT") || {
  echo "first-network: $STEP: nothing came back within 30 s; the tunnelers said:" >&2
  tail -n 5 "$WORK/host.log" "$WORK/proxy.log" >&2
  exit 1
}
echo "traffic: web answered through ziti: $ANSWER"
