//! Importing OpenAPI descriptions as HTTP tools: the Petstore in Swagger 2.0, OpenAPI 3.0 and
//! 3.1, a 3.1 document with nullable types and a recursive schema, broken documents; generated
//! tools loaded by the real loader and called against a local stub.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::openapi::{import, Import, Selection};
use engine::secrets::SecretResolver;
use engine::tools::http::{parse_definition, HttpTool, HttpToolDef, ParamIn};
use engine::tools::{pipeline, ParamType};
use serde_json::json;

use crate::http_tool::params;
use crate::servers;

fn fixture(name: &str) -> (String, String) {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openapi")
        .join(name);
    (
        path.display().to_string(),
        std::fs::read_to_string(&path).unwrap(),
    )
}

fn import_fixture(name: &str, selection: &Selection) -> Import {
    let (source, text) = fixture(name);
    import(&source, &text, selection).unwrap()
}

fn load(tool: &engine::openapi::GeneratedTool) -> HttpToolDef {
    parse_definition(Path::new(&tool.file_name), &tool.text)
        .unwrap_or_else(|e| panic!("{} does not load: {e:?}\n{}", tool.name, tool.text))
}

/// Name, location, type, required, enum, default.
type ParamShape = (
    String,
    ParamIn,
    ParamType,
    bool,
    Option<Vec<String>>,
    Option<serde_json::Value>,
);

/// What matters of a loaded tool, for comparing the forms of one API.
#[derive(Debug, PartialEq)]
struct Shape {
    name: String,
    method: String,
    endpoint: String,
    headers: Vec<(String, String)>,
    params: Vec<ParamShape>,
    description: String,
}

fn shape(def: &HttpToolDef) -> Shape {
    Shape {
        name: def.spec.name.clone(),
        method: def.method.clone(),
        endpoint: def.endpoint.clone(),
        headers: def.headers.clone().into_iter().collect(),
        params: def
            .spec
            .params
            .iter()
            .zip(&def.routes)
            .map(|(p, r)| {
                (
                    p.name.clone(),
                    r.location,
                    p.kind,
                    p.required,
                    p.enum_values.clone(),
                    p.default.clone(),
                )
            })
            .collect(),
        description: def.spec.description.clone(),
    }
}

#[test]
fn the_petstore_in_swagger_2_openapi_3_0_and_3_1_gives_the_same_three_tools() {
    let key = || vec![("X-API-Key".to_string(), "{{PETSTORE_API_KEY}}".to_string())];
    let note = "Note: Authentication (api_key): set the secret PETSTORE_API_KEY to the API key.";
    let expected = vec![
        Shape {
            name: "listPets".into(),
            method: "GET".into(),
            endpoint: "https://petstore.example.com/v1/pets".into(),
            headers: key(),
            params: vec![(
                "limit".into(),
                ParamIn::Query,
                ParamType::Integer,
                false,
                None,
                Some(json!(20)),
            )],
            description: format!("List all pets\n{note}"),
        },
        Shape {
            name: "createPets".into(),
            method: "POST".into(),
            endpoint: "https://petstore.example.com/v1/pets".into(),
            headers: key(),
            params: vec![
                (
                    "id".into(),
                    ParamIn::Body,
                    ParamType::Integer,
                    true,
                    None,
                    None,
                ),
                (
                    "name".into(),
                    ParamIn::Body,
                    ParamType::String,
                    true,
                    None,
                    None,
                ),
                (
                    "tag".into(),
                    ParamIn::Body,
                    ParamType::String,
                    false,
                    Some(vec!["cat".into(), "dog".into(), "bird".into()]),
                    None,
                ),
            ],
            description: format!("Create a pet\n{note}"),
        },
        Shape {
            name: "showPetById".into(),
            method: "GET".into(),
            endpoint: "https://petstore.example.com/v1/pets/{petId}".into(),
            headers: key(),
            params: vec![(
                "petId".into(),
                ParamIn::Path,
                ParamType::String,
                true,
                None,
                None,
            )],
            description: format!("Info for a specific pet\n{note}"),
        },
    ];
    for form in [
        "petstore-2.0.json",
        "petstore-3.0.yaml",
        "petstore-3.1.json",
    ] {
        let imported = import_fixture(form, &Selection::default());
        assert_eq!(imported.title, "Swagger Petstore");
        assert_eq!(imported.total, 3);
        assert!(
            imported.skipped.is_empty(),
            "{form}: {:?}",
            imported.skipped
        );
        let shapes: Vec<Shape> = imported.tools.iter().map(|t| shape(&load(t))).collect();
        assert_eq!(shapes, expected, "{form}");
        let t = &imported.tools[0];
        assert_eq!(t.file_name, "listPets.md");
        assert_eq!(t.operation, "GET /pets");
        assert_eq!(t.secrets, ["PETSTORE_API_KEY"]);
        // What the desktop's picker filters on.
        assert_eq!(t.tags, ["pets"], "{form}");
        assert_eq!(t.summary, "List all pets", "{form}");
        assert!(
            t.text.contains("# Imported from ")
                && t.text.contains("(JSON pointer /paths/~1pets/get)"),
            "{}",
            t.text
        );
    }
}

#[test]
fn operations_are_chosen_by_id_tag_or_search() {
    let names = |selection: Selection| {
        let i = import_fixture("petstore-3.0.yaml", &selection);
        (
            i.tools.into_iter().map(|t| t.name).collect::<Vec<_>>(),
            i.skipped,
        )
    };
    let (chosen, skipped) = names(Selection {
        operations: vec!["showPetById".into(), "nope".into()],
        ..Selection::default()
    });
    assert_eq!(chosen, ["showPetById"]);
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].operation, "nope");
    assert!(skipped[0].reason.contains("no operation"));
    let (chosen, _) = names(Selection {
        search: Some("CREATE".into()),
        ..Selection::default()
    });
    assert_eq!(chosen, ["createPets"]);
    let (chosen, _) = names(Selection {
        search: Some("{petId}".into()),
        ..Selection::default()
    });
    assert_eq!(chosen, ["showPetById"]);
    let (chosen, _) = names(Selection {
        tag: Some("pets".into()),
        ..Selection::default()
    });
    assert_eq!(chosen.len(), 3);
    let (chosen, _) = names(Selection {
        tag: Some("stores".into()),
        ..Selection::default()
    });
    assert!(chosen.is_empty());
}

#[tokio::test]
async fn a_generated_tool_sends_the_request_the_description_describes() {
    async fn any(
        axum::extract::State(log): axum::extract::State<servers::Log>,
        method: axum::http::Method,
        uri: axum::http::Uri,
        headers: axum::http::HeaderMap,
        body: axum::body::Bytes,
    ) -> axum::Json<serde_json::Value> {
        servers::record(&log, &method, &uri, &headers, &body);
        axum::Json(json!({"id": 42, "name": "Rex"}))
    }
    let server = servers::serve(axum::Router::new().fallback(any)).await;
    let (source, text) = fixture("petstore-3.0.yaml");
    let text = text.replace("{scheme}://petstore.example.com/{base}", &server.base);
    let imported = import(&source, &text, &Selection::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dotenv = dir.path().join(".env");
    std::fs::write(&dotenv, "PETSTORE_API_KEY=pk-test-0123456789\n").unwrap();
    let mut ctx = crate::http_tool::ctx();
    ctx.secrets = Some(Arc::new(SecretResolver::new(None, Some(dotenv))));
    let tool = |name: &str| {
        HttpTool::new(load(
            imported.tools.iter().find(|t| t.name == name).unwrap(),
        ))
    };

    let r = pipeline::run(&tool("showPetById"), &params(&[("petId", "42")]), &ctx).await;
    assert!(r.success, "{r:?}");
    let r = pipeline::run(&tool("listPets"), &params(&[]), &ctx).await;
    assert!(r.success, "{r:?}");
    let r = pipeline::run(
        &tool("createPets"),
        &params(&[("id", "7"), ("name", "Tom"), ("tag", "cat")]),
        &ctx,
    )
    .await;
    assert!(r.success, "{r:?}");
    let seen = server.requests();
    assert_eq!(seen.len(), 3);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].uri.as_str()),
        ("GET", "/pets/42")
    );
    assert_eq!(seen[0].header("x-api-key"), Some("pk-test-0123456789"));
    assert_eq!(seen[0].body, "");
    assert_eq!(
        (seen[1].method.as_str(), seen[1].uri.as_str()),
        ("GET", "/pets?limit=20")
    );
    assert_eq!(
        (seen[2].method.as_str(), seen[2].uri.as_str()),
        ("POST", "/pets")
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&seen[2].body).unwrap(),
        json!({"id": 7, "name": "Tom", "tag": "cat"})
    );
}

#[test]
fn nullable_types_recursive_schemas_and_what_cannot_be_expressed() {
    let imported = import_fixture("tree-3.1.yaml", &Selection::default());
    let names: Vec<&str> = imported.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["create_node", "get_nodes_id", "create_node_2"],
        "ids sanitised, a method_path name without one, unique in document order"
    );
    let defs: Vec<HttpToolDef> = imported.tools.iter().map(load).collect();
    let create = shape(&defs[0]);
    assert_eq!(
        create.endpoint, "https://eu.tree.example/api/nodes",
        "server variables filled"
    );
    assert_eq!(
        create.headers,
        [(
            "Authorization".to_string(),
            "Bearer {{ACME_TOKEN}}".to_string()
        )]
    );
    assert_eq!(defs[0].response_extract.as_deref(), Some("$.data"));
    assert_eq!(
        create.params[0],
        (
            "name".into(),
            ParamIn::Body,
            ParamType::String,
            true,
            None,
            None
        ),
        "type: [string, \"null\"] is a string, still required"
    );
    assert_eq!(
        create.params[1],
        (
            "weight".into(),
            ParamIn::Body,
            ParamType::Number,
            false,
            None,
            Some(json!(1.5))
        )
    );
    assert_eq!(
        defs[0].routes[2],
        engine::tools::http::ParamRoute {
            location: ParamIn::Body,
            json: true,
            multi_segment: false,
        }
    );
    let children = &defs[0].spec.params[2];
    assert_eq!(children.kind, ParamType::String);
    assert!(
        children.description
            == "Child nodes (JSON: [{…same fields as the whole body (recursive, cut)}])",
        "{}",
        children.description
    );
    assert!(
        create.description.contains(
            "Note: schema `Node` is recursive; it is described once and cut where it repeats"
        ),
        "{}",
        create.description
    );
    assert_eq!(
        defs[0].spec.params[3].description,
        "JSON: {…same fields as the whole body (recursive, cut)}"
    );
    let get = shape(&defs[1]);
    assert_eq!(
        get.params,
        [
            (
                "id".into(),
                ParamIn::Path,
                ParamType::Integer,
                true,
                None,
                None
            ),
            (
                "label".into(),
                ParamIn::Query,
                ParamType::String,
                false,
                None,
                None
            ),
            (
                "rev".into(),
                ParamIn::Query,
                ParamType::String,
                false,
                None,
                None
            ),
            (
                "depth".into(),
                ParamIn::Query,
                ParamType::Integer,
                false,
                None,
                None
            ),
        ],
        "oneOf/anyOf of scalars: their common type, else a string"
    );
    assert!(get
        .description
        .contains("`fields` (an array or object) is not offered"));
    assert!(get
        .description
        .contains("The optional cookie `session` is not sent"));
    assert!(
        shape(&defs[2]).headers.is_empty(),
        "`security: []` needs none"
    );
    let skipped: Vec<(&str, &str)> = imported
        .skipped
        .iter()
        .map(|s| (s.operation.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("upload (POST /uploads)", "the request body is multipart/form-data, not JSON"),
            (
                "remote (GET /remote)",
                "it uses the external reference `other.yaml#/components/parameters/Remote` (at /paths/~1remote/get/parameters/0/$ref), which is not followed"
            ),
        ]
    );
}

#[test]
fn a_broken_description_is_located_by_file_and_json_pointer() {
    let (source, text) = fixture("broken-3.0.yaml");
    let e = import(&source, &text, &Selection::default()).unwrap_err();
    assert_eq!(e.source_name, source);
    assert_eq!(e.pointer, "/paths/~1things~1{id}/get/parameters/0");
    assert!(e.message.contains("needs a `name` and an `in`"), "{e}");
    assert!(
        e.to_string().starts_with(&format!(
            "{source} at /paths/~1things~1{{id}}/get/parameters/0: "
        )),
        "{e}"
    );

    let dangling = text.replace(
        "        - name: id\n",
        "        - $ref: \"#/components/parameters/Nope\"\n          name: id\n",
    );
    let e = import("d.yaml", &dangling, &Selection::default()).unwrap_err();
    assert_eq!(e.pointer, "/paths/~1things~1{id}/get/parameters/0/$ref");
    assert!(e.message.contains("points to nothing"), "{e}");

    let e = import(
        "v.json",
        r#"{"openapi": "4.0.0", "paths": {}}"#,
        &Selection::default(),
    )
    .unwrap_err();
    assert_eq!(e.pointer, "/openapi");
    let e = import(
        "s.yaml",
        "openapi: 3.0.0\npaths: [\n",
        &Selection::default(),
    )
    .unwrap_err();
    assert!(e.line.is_some(), "{e:?}");
    assert!(e.to_string().starts_with("s.yaml:"), "{e}");
    let e = import(
        "p.json",
        r#"{"openapi": "3.1.0", "paths": []}"#,
        &Selection::default(),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "p.json at /paths: `paths` must be an object");
}

/// GitHub's REST description (`@octokit/openapi`, installed by `scripts/setup.sh --test`).
fn github_description() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/openapi/node_modules/@octokit/openapi/generated/api.github.com.json");
    assert!(
        path.is_file(),
        "GitHub's description is not installed at {}: run `scripts/setup.sh --test` (or `npm ci --prefix tests/openapi`)",
        path.display()
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// An operation's parameters as the description gives them (`$ref`s to
/// `#/components/parameters` resolved): name → (in, required, enum, default).
type SpecParam = (String, bool, Option<Vec<String>>, Option<serde_json::Value>);

fn spec_params(doc: &serde_json::Value, op: &serde_json::Value) -> Vec<(String, SpecParam)> {
    op["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| match p["$ref"].as_str() {
            Some(r) => doc.pointer(r.trim_start_matches('#')).unwrap().clone(),
            None => p.clone(),
        })
        .map(|p| {
            let values = p["schema"]["enum"].as_array().map(|v| {
                v.iter()
                    .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string))
                    .collect()
            });
            let default = p["schema"].get("default").cloned();
            (
                p["name"].as_str().unwrap().to_string(),
                (
                    p["in"].as_str().unwrap().to_string(),
                    p["required"].as_bool().unwrap_or(false),
                    values,
                    default,
                ),
            )
        })
        .collect()
}

fn location(name: &str) -> ParamIn {
    match name {
        "path" => ParamIn::Path,
        "query" => ParamIn::Query,
        "header" => ParamIn::Header,
        _ => ParamIn::Body,
    }
}

#[tokio::test]
async fn three_github_tools_match_the_description_and_one_sends_the_request_it_describes() {
    async fn any(
        axum::extract::State(log): axum::extract::State<servers::Log>,
        method: axum::http::Method,
        uri: axum::http::Uri,
        headers: axum::http::HeaderMap,
        body: axum::body::Bytes,
    ) -> axum::Json<serde_json::Value> {
        servers::record(&log, &method, &uri, &headers, &body);
        axum::Json(json!({"number": 1}))
    }
    let server = servers::serve(axum::Router::new().fallback(any)).await;
    let mut doc = github_description();
    doc["servers"] = json!([{ "url": server.base }]);
    let chosen = [
        ("issues/create", "/repos/{owner}/{repo}/issues", "post"),
        (
            "issues/list-for-repo",
            "/repos/{owner}/{repo}/issues",
            "get",
        ),
        (
            "repos/get-content",
            "/repos/{owner}/{repo}/contents/{path}",
            "get",
        ),
    ];
    let selection = Selection {
        operations: chosen.iter().map(|c| c.0.to_string()).collect(),
        ..Selection::default()
    };
    let imported = engine::openapi::import_value("api.github.com.json", &doc, &selection).unwrap();
    assert!(imported.skipped.is_empty(), "{:?}", imported.skipped);
    assert_eq!(imported.tools.len(), 3);

    // Field by field against the description.
    let tool_for = |id: &str| {
        let name = id.replace('/', "_");
        imported
            .tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    for (id, path, method) in chosen {
        let tool = tool_for(id);
        let op = &doc["paths"][path][method];
        let def = load(tool);
        assert_eq!(def.method, method.to_uppercase(), "{id}");
        assert_eq!(def.endpoint, format!("{}{path}", server.base), "{id}");
        assert!(
            def.spec
                .description
                .starts_with(op["summary"].as_str().unwrap()),
            "{id}: {}",
            def.spec.description
        );
        for (name, (at, required, values, default)) in spec_params(&doc, op) {
            let Some(param) = def.spec.params.iter().find(|p| p.name == name) else {
                // Left out (an optional array or object query parameter): said in the text.
                assert!(!required, "{id}: required `{name}` is missing");
                assert!(
                    tool.text.contains(&format!("`{name}`")),
                    "{id}: `{name}` left out without a note"
                );
                continue;
            };
            assert_eq!(
                def.route(&name).unwrap().location,
                location(&at),
                "{id} {name}"
            );
            assert_eq!(param.required, required, "{id} {name}");
            assert_eq!(param.enum_values, values, "{id} {name}");
            assert_eq!(param.default, default, "{id} {name}");
        }
        if let Some(body) = op["requestBody"]["content"]["application/json"]["schema"].as_object() {
            let required: Vec<&str> = body["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .collect();
            for (name, _) in body["properties"].as_object().unwrap() {
                if let Some(param) = def.spec.params.iter().find(|p| &p.name == name) {
                    assert_eq!(
                        def.route(name).unwrap().location,
                        ParamIn::Body,
                        "{id} {name}"
                    );
                    assert_eq!(
                        param.required,
                        required.contains(&name.as_str()),
                        "{id} {name}"
                    );
                }
            }
            let title = def.spec.params.iter().find(|p| p.name == "title").unwrap();
            assert_eq!(title.kind, ParamType::String, "oneOf string/integer");
            assert!(
                def.route("labels").unwrap().json,
                "an array body property is JSON text"
            );
        }
    }

    // GitHub marks `contents/{path}` as spanning segments: the tool keeps its `/`.
    let content = load(tool_for("repos/get-content"));
    assert!(content.route("path").unwrap().multi_segment);
    assert!(!content.route("repo").unwrap().multi_segment);

    // issues/create sends what the description says: POST to the repository's issues, the
    // body properties as a JSON object.
    let create = HttpTool::new(load(tool_for("issues/create")));
    let ctx = crate::http_tool::ctx();
    let r = pipeline::run(
        &create,
        &params(&[
            ("owner", "octo"),
            ("repo", "hello world"),
            ("title", "Found a bug"),
            ("labels", r#"["bug", "ui"]"#),
        ]),
        &ctx,
    )
    .await;
    assert!(r.success, "{r:?}");
    let seen = server.requests();
    assert_eq!(
        (seen[0].method.as_str(), seen[0].uri.as_str()),
        ("POST", "/repos/octo/hello%20world/issues")
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&seen[0].body).unwrap(),
        json!({"title": "Found a bug", "labels": ["bug", "ui"]})
    );
}

/// A description's text is data: templates in its server URL or paths are never filled, a path
/// cannot move the host, and the secrets listed are every template the tool fills.
#[tokio::test]
async fn a_description_cannot_fill_secrets_or_change_the_host() {
    std::env::set_var("AF_OA_LEAK_ENV", "leaked-value-5be1");
    let server = servers::json_api().await;
    let doc = |server_url: String, paths: serde_json::Value| {
        json!({
            "openapi": "3.0.3",
            "info": {"title": "Shop API", "version": "1"},
            "servers": [{"url": server_url}],
            "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}}},
            "security": [{"key": []}],
            "paths": paths,
        })
    };
    let op =
        |id: &str| json!({"get": {"operationId": id, "responses": {"200": {"description": "ok"}}}});
    let run = |doc: serde_json::Value| {
        engine::openapi::import_value("shop.json", &doc, &Selection::default()).unwrap()
    };

    // A template in the server URL's query: refused, nothing to fill.
    let imported = run(doc(
        format!("{}/collect?k={{{{AF_OA_LEAK_ENV}}}}&", server.base),
        json!({"/items": op("list")}),
    ));
    assert!(imported.tools.is_empty(), "{:?}", imported.tools);
    assert!(
        imported.skipped[0]
            .reason
            .contains("has a query or fragment"),
        "{:?}",
        imported.skipped
    );

    // Templates in the server URL's path and in the path are escaped, and sent as text.
    let imported = run(doc(
        format!("{}/echo/v<<AF_OA_LEAK_ENV>>", server.base),
        json!({"/items/{{AF_OA_LEAK_ENV}}": op("list")}),
    ));
    let [tool] = &imported.tools[..] else {
        panic!("{:?}", imported.skipped)
    };
    assert_eq!(tool.secrets, ["SHOP_API_KEY"], "every template it fills");
    assert!(
        !tool.text.contains("{{AF_OA") && !tool.text.contains("<<AF_OA"),
        "{}",
        tool.text
    );
    let t = HttpTool::new(load(tool));
    let r = pipeline::run(&t, &params(&[]), &crate::http_tool::ctx()).await;
    assert!(r.success, "{r:?}");
    let seen = server.requests().pop().unwrap();
    assert!(!seen.uri.contains("leaked-value"), "{}", seen.uri);
    assert_eq!(
        seen.uri,
        "/echo/v%3C%3CAF_OA_LEAK_ENV%3E%3E/items/%7B%7BAF_OA_LEAK_ENV%7D%7D"
    );

    // A path that does not start with `/` would make the host `127.0.0.1.evil.example`.
    let imported = run(doc(
        "https://api.shop.example".into(),
        json!({".evil.example/steal": op("steal"), "/ok": op("ok")}),
    ));
    assert_eq!(
        imported
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["ok"]
    );
    assert_eq!(
        imported.skipped[0].operation,
        "steal (GET .evil.example/steal)"
    );
    assert!(imported.skipped[0]
        .reason
        .contains("does not start with `/`"));
}

/// Each level's `n` properties all `$ref` the next level, in every operation's body: the
/// shapes summarised would be n³ long per property. They stop at the summary limit instead.
fn fan_out(n: usize, operations: usize) -> serde_json::Value {
    let mut schemas = serde_json::Map::new();
    for level in 0..4 {
        let props: serde_json::Map<String, serde_json::Value> = (0..n)
            .map(|i| {
                let target = if level == 3 {
                    json!({"type": "string"})
                } else {
                    json!({"$ref": format!("#/components/schemas/L{}", level + 1)})
                };
                (format!("f{i}"), target)
            })
            .collect();
        schemas.insert(
            format!("L{level}"),
            json!({"type": "object", "properties": props}),
        );
    }
    let paths: serde_json::Map<String, serde_json::Value> = (0..operations)
        .map(|i| {
            (
                format!("/things{i}"),
                json!({"post": {"operationId": format!("make{i}"), "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/L0"}}}}, "responses": {"200": {"description": "ok"}}}}),
            )
        })
        .collect();
    json!({"openapi": "3.0.3", "info": {"title": "Fan", "version": "1"},
           "servers": [{"url": "https://fan.example"}],
           "components": {"schemas": schemas}, "paths": paths})
}

#[test]
fn fan_out_refs_are_summarised_within_a_bound() {
    let doc = fan_out(12, 40);
    let imported = engine::openapi::import_value("fan.json", &doc, &Selection::default()).unwrap();
    assert_eq!(imported.tools.len(), 40);
    for tool in &imported.tools {
        for p in &load(tool).spec.params {
            // `JSON: ` and the shape, cut at the limit.
            let chars = p.description.chars().count();
            assert!(chars <= 2_000 + 6, "{}: {chars} characters", p.name);
        }
    }
    let total: usize = imported.tools.iter().map(|t| t.text.len()).sum();
    assert!(
        total < 40 * 12 * 8_000,
        "{total} bytes from a {}-byte description",
        doc.to_string().len()
    );
    let first = load(&imported.tools[0]);
    let f0 = first.spec.params.iter().find(|p| p.name == "f0").unwrap();
    assert!(f0.description.ends_with('…'), "{}", f0.description);
    assert!(imported.tools[0]
        .text
        .contains("summarised in 2000 characters"));
}

/// A schema whose `allOf` lists itself k times merged k⁶ times before; each part is merged once.
#[test]
fn a_self_referencing_all_of_is_merged_once() {
    let parts: Vec<_> = (0..12)
        .map(|_| json!({"$ref": "#/components/schemas/Loop"}))
        .collect();
    let doc = json!({"openapi": "3.0.3", "info": {"title": "Loop", "version": "1"},
        "servers": [{"url": "https://loop.example"}],
        "components": {"schemas": {"Loop": {"allOf": parts, "properties": {"name": {"type": "string"}}, "required": ["name"]}}},
        "paths": {"/loop": {"post": {"operationId": "loop", "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Loop"}}}}, "responses": {"200": {"description": "ok"}}}}}});
    let imported = engine::openapi::import_value("loop.json", &doc, &Selection::default()).unwrap();
    let def = load(&imported.tools[0]);
    assert_eq!(
        def.spec
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.required))
            .collect::<Vec<_>>(),
        [("name", true)]
    );
    assert!(
        imported.expanded < 100,
        "{} schema nodes expanded",
        imported.expanded
    );
}

/// Past the expansion budget the import stops with an error naming where.
#[test]
fn past_the_expansion_budget_the_import_fails_where_it_ran_out() {
    let doc = fan_out(12, 40);
    let e = engine::openapi::import_within("fan.json", &doc, &Selection::default(), 500, &|| false)
        .unwrap_err();
    assert_eq!(e.source_name, "fan.json");
    assert!(e.pointer.starts_with("/components/schemas/L"), "{e}");
    assert!(e.message.contains("expand past 500 nodes"), "{e}");
    let whole = engine::openapi::import_value("fan.json", &doc, &Selection::default()).unwrap();
    assert!(whole.expanded > 500 && whole.expanded < engine::openapi::schema::MAX_EXPANDED);
}

/// A cancelled import stops with an error saying so (the desktop's Cancel while reading).
#[test]
fn a_cancelled_import_stops() {
    let text = fan_out(12, 40).to_string();
    let asked = std::sync::atomic::AtomicUsize::new(0);
    let cancelled = || asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 100;
    let e =
        engine::openapi::import_cancellable("fan.json", &text, &Selection::default(), &cancelled)
            .unwrap_err();
    assert_eq!(e.message, engine::openapi::schema::CANCELLED);
    assert!(
        asked.load(std::sync::atomic::Ordering::Relaxed) < 1_000,
        "it stopped soon after"
    );
}
