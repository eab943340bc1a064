-- wrk script for `tandem serve` (issue 32 item 4): POST /search with the queries
-- of a query file in turn, one body a request, so that the load is real queries
-- and not one repeated. Runs under Debian's wrk (4.x, LuaJIT):
--
--   wrk -t1 -c1 -d10s -s scripts/serve_wrk.lua URL -- QUERIES [K [ALGORITHM]]
--
-- QUERIES: lines of id:text, id<TAB>text or plain text (the id is dropped; a
-- line's text is sent as {"query": text}); or GET:/path for plain GETs of a path
-- (GET:/health: the HTTP round trip without a search). K (default 10) and ALGORITHM
-- (default maxscore) go in every body. The file is cycled for -d seconds (wrk
-- runs for its duration whatever a thread does, so a run is timed, not a count
-- of passes: make it several passes). Threads start at places spread over the
-- file. At the end one line for a caller to read:
--   wrk: requests N errors E non2xx X p50_us A p90_us B p99_us C max_us D mean_us M rps R
-- (latency: from writing a request to the last byte of its answer, µs).

local bodies = {}
local nth = 0
local next_i = 1

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' elseif c == '\\' then return '\\\\' end
    return string.format('\\u%04x', c:byte())
  end) .. '"'
end

local function query_text(line)
  local t = line:match('^[^\t]*\t(.*)$') or line:match('^[^:]*:(.*)$') or line
  return t
end

function setup(thread)
  thread:set('id', nth)
  nth = nth + 1
end

function init(args)
  local path = args[1] or error('serve_wrk.lua: give the query file after --')
  local k = tonumber(args[2] or '10')
  local algorithm = args[3] or 'maxscore'
  local head = { ['Content-Type'] = 'application/json' }
  local get = path:match('^GET:(/.*)$')
  if get then bodies[1] = wrk.format('GET', get) end
  for line in get and function() end or io.lines(path) do
    line = line:gsub('\r$', '')
    if line:match('%S') then
      local body = '{"query": ' .. json_string(query_text(line)) .. ', "k": ' .. k ..
                   ', "algorithm": ' .. json_string(algorithm) .. '}'
      bodies[#bodies + 1] = wrk.format('POST', '/search', head, body)
    end
  end
  if #bodies == 0 then error('serve_wrk.lua: no queries in ' .. path) end
  local t = tonumber(wrk.thread:get('id')) or 0
  next_i = math.floor(#bodies * ((t * 0.6180339887) % 1)) + 1
end

function request()
  local r = bodies[next_i]
  next_i = next_i % #bodies + 1
  return r
end

function done(summary, latency, requests)
  local e = summary.errors
  local rps = summary.duration > 0 and summary.requests / (summary.duration / 1e6) or 0
  io.write(string.format('wrk: requests %d errors %d non2xx %d p50_us %d p90_us %d p99_us %d ' ..
                         'max_us %d mean_us %.1f rps %.1f\n', summary.requests,
                         e.connect + e.read + e.write + e.timeout, e.status,
                         latency:percentile(50), latency:percentile(90),
                         latency:percentile(99), latency.max, latency.mean, rps))
end
