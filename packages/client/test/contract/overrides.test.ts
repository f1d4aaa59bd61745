import { overrides } from "@phasebound/testkit/contract"
import { registerFamilies } from "./register.js"

registerFamilies([overrides])
