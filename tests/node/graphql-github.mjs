// graphql-github.mjs — GitHub's GraphQL schema, as the npm package @octokit/graphql-schema
// publishes it (its introspection answer, schema.json), served by graphql-yoga on
// graphql-js, so that every document the gateway sends is parsed, validated and executed
// by the reference implementation:
//
//   node graphql-github.mjs <port>
//
// Prints "listening <port>" on stdout once it listens on 127.0.0.1.
//
// The data is made up: a field answers what its parent object holds under its name, or
// else a value of its type (a string, 1, true, an enum's first value, a list of one, an
// object, for an interface or union its first possible type). A few resolvers answer as
// GitHub does where a test looks closer:
// - search returns an App, a MarketplaceListing and an Organization, whose logoUrl and
//   name differ in nullability (App.logoUrl: URI!, MarketplaceListing.logoUrl: URI);
// - repository(owner, name) fails as GitHub does for a repository that does not exist:
//   null, with an error on the path ["repository"].
import { createServer } from "node:http";
import { schema as github } from "@octokit/graphql-schema";
import { createYoga } from "graphql-yoga";
import {
  buildClientSchema,
  getNamedType,
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from "graphql";

const port = Number(process.argv[2]);
const schema = buildClientSchema(github.json);

const scalars = { String: "text", Int: 1, Float: 1.5, Boolean: true, ID: "MDQ6VXNlcjE=" };

// made is a value of type t.
function made(t) {
  if (isNonNullType(t)) return made(t.ofType);
  if (isListType(t)) return [made(t.ofType)];
  if (isScalarType(t)) return t.name in scalars ? scalars[t.name] : "2026-01-01T00:00:00Z";
  if (isEnumType(t)) return t.getValues()[0].value;
  if (isAbstractType(t)) return { __typename: schema.getPossibleTypes(t)[0].name };
  return {};
}

const answers = {
  Query: {
    search: () => {
      const nodes = [
        { __typename: "App", logoUrl: "https://github.com/app.png", name: "an app" },
        { __typename: "MarketplaceListing", logoUrl: null, name: "a listing" },
        { __typename: "Organization", name: null, login: "an-org" },
      ];
      return { issueCount: 0, nodes, edges: nodes.map((node, i) => ({ cursor: String(i), node })) };
    },
    repository: (_, args) => {
      throw new Error(`Could not resolve to a Repository with the name '${args.owner}/${args.name}'.`);
    },
  },
};

for (const type of Object.values(schema.getTypeMap())) {
  if (type.name.startsWith("__")) continue;
  if (isAbstractType(type)) type.resolveType = (v) => v.__typename;
  if (!isObjectType(type)) continue;
  for (const field of Object.values(type.getFields())) {
    const own = answers[type.name]?.[field.name];
    field.resolve =
      own ?? ((parent) => (parent && field.name in parent ? parent[field.name] : made(field.type)));
  }
}

const yoga = createYoga({ schema, graphiql: false, maskedErrors: false, logging: false });
createServer(yoga).listen(port, "127.0.0.1", () => console.log(`listening ${port}`));
