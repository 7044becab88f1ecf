// The catalog page's behaviour: copy buttons for the client snippets, the
// viewer's credential, and a "try it" form per tool that calls it through
// this same endpoint (an MCP session: initialize, notifications/initialized,
// tools/call). Served by the module from the endpoint's own URL, allowed by
// the page's CSP by URL and integrity; it builds the DOM with textContent
// only (the CSP requires Trusted Types, so innerHTML would be refused).
(function () {
	"use strict";

	var PROTOCOL = "2025-06-18";
	var endpoint = location.pathname; // same origin: passes the Host/Origin gate
	var main = document.getElementById("catalog");
	var credHeader = main.dataset.credHeader || "";
	var credScheme = main.dataset.credScheme || "";
	var storageKey = "edgemcp-credential:" + endpoint;
	var credential = ""; // the viewer's secret: this page's memory, sessionStorage if asked
	var session = null;
	var nextID = 1;

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined) e.textContent = text;
		return e;
	}

	// Copy buttons: the snippet's text, through the Clipboard API when the
	// page may use it, else by selecting it for the viewer.
	document.querySelectorAll("button.copy").forEach(function (b) {
		b.hidden = false;
		b.addEventListener("click", function () {
			var src = document.getElementById(b.dataset.copy);
			var done = function () { b.textContent = "Copied"; setTimeout(function () { b.textContent = "Copy"; }, 1500); };
			var select = function () {
				var range = document.createRange();
				range.selectNodeContents(src);
				var sel = getSelection();
				sel.removeAllRanges();
				sel.addRange(range);
				b.textContent = "Selected: press Ctrl+C";
			};
			if (navigator.clipboard && navigator.clipboard.writeText) {
				navigator.clipboard.writeText(src.textContent).then(done, select);
			} else {
				select();
			}
		});
	});

	// The credential panel.
	var credForm = document.getElementById("credential");
	if (credForm) {
		var input = credForm.querySelector("input[name=credential]");
		var keep = credForm.querySelector("input[name=keep]");
		var status = credForm.querySelector(".cred-status");
		try {
			credential = sessionStorage.getItem(storageKey) || "";
		} catch (e) { /* storage disabled */ }
		input.value = credential;
		keep.checked = credential !== "";
		var update = function () {
			credential = input.value.trim();
			try {
				if (keep.checked && credential) sessionStorage.setItem(storageKey, credential);
				else sessionStorage.removeItem(storageKey);
			} catch (e) { /* storage disabled */ }
		};
		input.addEventListener("input", update);
		keep.addEventListener("change", update);
		credForm.addEventListener("submit", function (ev) {
			ev.preventDefault();
			update();
			status.textContent = "Loading the tools this credential may call…";
			listTools().then(function (tools) {
				var added = 0;
				tools.forEach(function (t) {
					if (!document.getElementById("tool-" + t.name)) {
						addToolCard(t);
						added++;
					}
				});
				status.textContent = tools.length + " tool" + (tools.length === 1 ? "" : "s") + " callable with this credential" +
					(added ? ", " + added + " added below" : "") + ".";
			}, function (err) {
				status.textContent = err.message;
			});
		});
	}

	function headers(s) {
		var h = { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" };
		if (credential && credHeader) h[credHeader] = credScheme + credential;
		if (s) {
			if (s.id) h["Mcp-Session-Id"] = s.id;
			h["MCP-Protocol-Version"] = s.version;
		}
		return h;
	}

	function post(msg, s) {
		return fetch(endpoint, {
			method: "POST", headers: headers(s), body: JSON.stringify(msg),
			credentials: "same-origin", cache: "no-store", redirect: "error"
		});
	}

	// answer reads the JSON-RPC answer to id from a JSON or SSE response; an
	// HTTP failure without a JSON-RPC body becomes an Error.
	function answer(res, id) {
		var type = res.headers.get("Content-Type") || "";
		return res.text().then(function (text) {
			var msgs = [];
			if (type.indexOf("text/event-stream") === 0) {
				text.split(/\r?\n\r?\n/).forEach(function (event) {
					var data = event.split(/\r?\n/).filter(function (l) { return l.indexOf("data:") === 0; })
						.map(function (l) { return l.slice(5).replace(/^ /, ""); }).join("\n");
					if (data) {
						try { msgs.push(JSON.parse(data)); } catch (e) { /* not a message */ }
					}
				});
			} else if (type.indexOf("json") >= 0) {
				try { msgs.push(JSON.parse(text)); } catch (e) { /* reported below */ }
			}
			for (var i = 0; i < msgs.length; i++) {
				var m = msgs[i];
				if (m && (m.id === id || (m.id === null && m.error) || (!res.ok && m.error))) return m;
			}
			throw new Error("HTTP " + res.status + (text.trim() ? ": " + text.trim().slice(0, 300) : ""));
		});
	}

	function rpcError(e) {
		var err = new Error("JSON-RPC error " + e.code + ": " + e.message);
		err.rpc = e;
		return err;
	}

	// ensureSession initializes an MCP session for the current credential.
	function ensureSession() {
		var key = credHeader + " " + credential;
		if (session && session.key === key) return Promise.resolve(session);
		closeSession();
		var id = nextID++;
		var res;
		return post({
			jsonrpc: "2.0", id: id, method: "initialize",
			params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "edgemcp-catalog", version: "1" } }
		}).then(function (r) {
			res = r;
			return answer(r, id);
		}).then(function (msg) {
			if (msg.error) throw rpcError(msg.error);
			var s = { key: key, id: res.headers.get("Mcp-Session-Id"), version: msg.result.protocolVersion || PROTOCOL };
			return post({ jsonrpc: "2.0", method: "notifications/initialized" }, s).then(function () {
				session = s;
				return s;
			});
		});
	}

	function closeSession() {
		if (session && session.id) {
			fetch(endpoint, { method: "DELETE", headers: headers(session), keepalive: true, credentials: "same-origin" }).catch(function () {});
		}
		session = null;
	}
	addEventListener("pagehide", closeSession);

	// request sends one JSON-RPC request in the session, once more in a new
	// session if the server forgot this one (404, as the transport specifies).
	function request(method, params, retried) {
		return ensureSession().then(function (s) {
			var id = nextID++;
			return post({ jsonrpc: "2.0", id: id, method: method, params: params }, s).then(function (res) {
				if (res.status === 404 && s.id && !retried) {
					session = null;
					return request(method, params, true);
				}
				return answer(res, id);
			});
		});
	}

	function listTools() {
		var tools = [];
		var page = function (cursor, n) {
			return request("tools/list", cursor ? { cursor: cursor } : {}).then(function (msg) {
				if (msg.error) throw rpcError(msg.error);
				tools = tools.concat(msg.result.tools || []);
				if (msg.result.nextCursor && n < 100) return page(msg.result.nextCursor, n + 1);
				return tools;
			});
		};
		return page("", 0);
	}

	// kind is how an input is edited: enum, string, integer, number,
	// boolean, or json (objects, arrays, anything else).
	function kind(prop) {
		if (Array.isArray(prop.enum)) return "enum";
		var t = prop.type;
		if (Array.isArray(t)) t = t.filter(function (x) { return x !== "null"; })[0];
		return ["string", "integer", "number", "boolean"].indexOf(t) >= 0 ? t : "json";
	}

	function field(name, prop, required) {
		var k = kind(prop);
		var wrap = el("label", "field");
		var head = el("span", "field-name", name);
		head.appendChild(el("span", "field-type", k === "json" ? (prop.type || "json") + " (JSON)" : k === "enum" ? "one of" : k));
		if (required) head.appendChild(el("span", "required", "required"));
		wrap.appendChild(head);
		var input;
		if (k === "enum" || k === "boolean") {
			input = el("select");
			var values = k === "enum" ? prop.enum : [true, false];
			var none = el("option", "", required ? "— choose —" : "— not sent —");
			none.value = "";
			input.appendChild(none);
			values.forEach(function (v) {
				var o = el("option", "", String(v));
				o.value = JSON.stringify(v);
				input.appendChild(o);
			});
		} else if (k === "json") {
			input = el("textarea");
			input.rows = 3;
			input.spellcheck = false;
		} else {
			input = el("input");
			input.type = k === "string" ? "text" : "number";
			if (k === "integer") input.step = "1";
			if (k === "number") input.step = "any";
		}
		input.name = name;
		input.dataset.kind = k;
		if (prop.default !== undefined && input.tagName !== "SELECT") {
			input.placeholder = "default " + (typeof prop.default === "string" ? prop.default : JSON.stringify(prop.default));
		} else if (prop.format && input.tagName === "INPUT") {
			input.placeholder = prop.format;
		}
		wrap.appendChild(input);
		if (prop.description) wrap.appendChild(el("span", "field-about", prop.description));
		return wrap;
	}

	// argumentsOf reads the form; empty fields are not sent (the gateway
	// applies defaults and reports missing required inputs).
	function argumentsOf(form) {
		var args = {};
		form.querySelectorAll("[data-kind]").forEach(function (input) {
			var v = input.value;
			if (v === "") return;
			switch (input.dataset.kind) {
			case "enum":
			case "boolean":
				args[input.name] = JSON.parse(v);
				break;
			case "integer":
			case "number":
				args[input.name] = Number(v);
				break;
			case "json":
				try {
					args[input.name] = JSON.parse(v);
				} catch (e) {
					throw new Error(input.name + ": not valid JSON (" + e.message + ")");
				}
				break;
			default:
				args[input.name] = v;
			}
		});
		return args;
	}

	function pretty(text) {
		try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
	}

	function show(out, msg) {
		out.textContent = "";
		if (msg instanceof Error) {
			out.className = "try-result error";
			out.appendChild(el("p", "try-status", msg.message));
			return;
		}
		if (msg.error) {
			out.className = "try-result error";
			out.appendChild(el("p", "try-status", "JSON-RPC error " + msg.error.code + ": " + msg.error.message));
			if (msg.error.data !== undefined) out.appendChild(el("pre", "", JSON.stringify(msg.error.data, null, 2)));
			return;
		}
		var r = msg.result || {};
		out.className = "try-result" + (r.isError ? " error" : " ok");
		out.appendChild(el("p", "try-status", r.isError ? "The tool reported an error" : "Result"));
		(r.content || []).forEach(function (c) {
			out.appendChild(el("pre", "", c.type === "text" ? pretty(c.text) : JSON.stringify(c, null, 2)));
		});
		if (!(r.content || []).length && r.structuredContent !== undefined) {
			out.appendChild(el("pre", "", JSON.stringify(r.structuredContent, null, 2)));
		}
	}

	function buildForm(form, schema) {
		var props = (schema && schema.properties) || {};
		var required = (schema && schema.required) || [];
		var names = Object.keys(props);
		names.forEach(function (name) {
			form.appendChild(field(name, props[name] || {}, required.indexOf(name) >= 0));
		});
		if (!names.length) form.appendChild(el("p", "none", "No inputs."));
		var submit = el("button", "call", "Call " + form.dataset.tool);
		submit.type = "submit";
		form.appendChild(submit);
		var out = el("div", "try-result");
		out.setAttribute("aria-live", "polite");
		form.appendChild(out);
		form.addEventListener("submit", function (ev) {
			ev.preventDefault();
			var args;
			try {
				args = argumentsOf(form);
			} catch (e) {
				show(out, e);
				return;
			}
			submit.disabled = true;
			out.className = "try-result";
			out.textContent = "Calling…";
			request("tools/call", { name: form.dataset.tool, arguments: args }).then(function (msg) {
				show(out, msg);
			}, function (err) {
				show(out, err);
			}).then(function () {
				submit.disabled = false;
			});
		});
	}

	function tryIt(name, schema) {
		var details = el("details", "try");
		details.appendChild(el("summary", "", "Try it"));
		var form = el("form", "try-form");
		form.dataset.tool = name;
		details.appendChild(form);
		buildForm(form, schema);
		return details;
	}

	// addToolCard shows a tool that tools/list gave for the credential but
	// the page did not list (the browser sent no credential for it).
	function addToolCard(t) {
		var list = document.getElementById("tools");
		var empty = list.querySelector(".empty");
		if (empty) empty.remove();
		var section = el("section", "tool");
		section.id = "tool-" + t.name;
		var head = el("div", "tool-head");
		head.appendChild(el("h2", "", t.name));
		if (t.title) head.appendChild(el("span", "title", t.title));
		section.appendChild(head);
		section.appendChild(el("p", "desc", t.description || ""));
		section.appendChild(tryIt(t.name, t.inputSchema));
		list.appendChild(section);
	}

	document.querySelectorAll("form.try-form[data-schema]").forEach(function (form) {
		var schema = {};
		try { schema = JSON.parse(form.dataset.schema); } catch (e) { /* no inputs shown */ }
		buildForm(form, schema);
	});
})();
