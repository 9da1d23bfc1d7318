-- wrk's script for `npm run bench` (bench/throughput/wrk-load.ts): plays back a file of requests
-- made by workloads.ts, one per line: method, path, body (may be empty), then any extra headers
-- as "name: value", all separated by tabs. Script arguments: the file, the token, optionally a
-- string whose presence in a body marks a failure the status cannot tell (an MCP tool's error;
-- bodies are read only then), and optionally the milliseconds each connection waits between an
-- answer and its next request (a paced run). done() prints one line of JSON for the harness.

local threads = {}

function setup(thread)
  thread:set("thread_index", #threads)
  table.insert(threads, thread)
end

function init(args)
  local file, token, failure, pause = args[1], args[2], args[3], tonumber(args[4])
  requests = {}
  for line in io.lines(file) do
    local method, path, body, extra = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t?(.*)$")
    local headers = { Authorization = "Bearer " .. token }
    if body == "" then
      body = nil
    else
      headers["Content-Type"] = "application/json"
    end
    for name, value in extra:gmatch("([^\t:]+): ([^\t]*)") do
      headers[name] = value
    end
    requests[#requests + 1] = wrk.format(method, path, headers, body)
  end
  -- Threads start far apart in the list, so that they do not send the same requests.
  position = math.floor(#requests * thread_index / 16)
  failures = 0
  if pause then
    -- wrk asks for delay() only when the script defines it: defined here, once the arguments are known.
    delay = function()
      return pause
    end
  end
  if failure and failure ~= "" then
    response = function(status, headers, body)
      if body and body:find(failure, 1, true) then
        failures = failures + 1
      end
    end
  end
end

function request()
  position = position % #requests + 1
  return requests[position]
end

function done(summary, latency)
  local failed = 0
  for _, thread in ipairs(threads) do
    failed = failed + thread:get("failures")
  end
  local errors = summary.errors
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
      '"failures":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d}\n',
    summary.requests, summary.duration, summary.bytes, errors.connect, errors.read, errors.write, errors.status,
    errors.timeout, failed, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
